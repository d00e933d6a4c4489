import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type RequestOptions, type TestApp } from '../helpers/test-app.js';

// The spec's figures (Login 5 / 15 min, Registration 3 / 1 h). A request refused for its shape tested no
// credential and created no account: it must not spend those budgets (issue 28, "locked out by typos").
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: '1', RATE_LIMIT_LOGIN: '5/15m', RATE_LIMIT_REGISTRATION: '3/1h', RATE_LIMIT_DEFAULT: '1000/1m' } });
});
afterAll(async () => t?.close());

let n = 0;
/** A fresh client address per test, so each starts with full budgets. */
const nextIp = () => `198.51.100.${++n}`;
const as = (ip: string, opts: RequestOptions = {}): RequestOptions => ({ ...opts, headers: { 'X-Forwarded-For': ip, ...opts.headers } });
const JSON_TYPE = { 'Content-Type': 'application/json' };

/** The typos a client makes: bad JSON, an empty object, a form post, text/plain, another content type. */
const malformed = (fields: string): RequestOptions[] => [
  { raw: '{"email":', headers: JSON_TYPE },
  { body: {} },
  { raw: fields, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
  { raw: fields, headers: { 'Content-Type': 'text/plain' } },
  { raw: '<login/>', headers: { 'Content-Type': 'application/xml' } },
];

describe('login', () => {
  it('when one good login is followed by malformed ones, then the next correct login still succeeds', async () => {
    const user = await makeUser(t);
    const ip = nextIp();
    const good = () => t.request('POST', '/auth/login', as(ip, { body: { email: user.email, password: DEFAULT_PASSWORD } }));
    expect((await good()).status).toBe(200);
    for (const typo of malformed(`email=${encodeURIComponent(user.email!)}&password=x`)) {
      const r = await t.request('POST', '/auth/login', as(ip, typo));
      expect([400, 415], JSON.stringify(typo)).toContain(r.status);
      expect(r.body.success).toBe(false);
      // Counted, but in default: the answer shows default's figure.
      expect(r.headers.get('x-ratelimit-limit')).toBe('1000');
    }
    const after = await good();
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.headers.get('x-ratelimit-limit')).toBe('5');
    expect(after.headers.get('x-ratelimit-remaining')).toBe('3');
  });

  it('when real attempts with wrong passwords exceed the figure, then the spec limit still applies', async () => {
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await t.request('POST', '/auth/login', as(ip, { body: { email: `nobody${i}@example.test`, password: 'wrong-password' } }))).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('when a password change misses its fields, then the login budget is not spent either', async () => {
    const { token } = await makeSession(t);
    const ip = nextIp();
    for (let i = 0; i < 6; i++) {
      const r = await t.request('POST', '/auth/password-change/self', as(ip, { session: token, body: {} }));
      expect(r.status).toBe(400);
    }
    const wrong = await t.request(
      'POST',
      '/auth/password-change/self',
      as(ip, { session: token, body: { current_password: 'Nope-Nope-1', new_password: 'Other-Horse-43' } }),
    );
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('x-ratelimit-remaining')).toBe('4');
  });
});

describe('registration', () => {
  for (const path of ['/auth/register/public', '/auth/register']) {
    it(`when three malformed sign-ups hit ${path}, then registration is not locked and a real one goes through`, async () => {
      const ip = nextIp();
      for (const typo of malformed('email=a%40b.test&password=x').slice(0, 4)) {
        const r = await t.request('POST', path, as(ip, typo));
        expect([400, 415], JSON.stringify(typo)).toContain(r.status);
      }
      const ok = await t.request('POST', path, as(ip, { body: { email: uniqueEmail('typo'), password: DEFAULT_PASSWORD, name: 'Typo' } }));
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.headers.get('x-ratelimit-remaining')).toBe('2');
    });
  }

  it('when real sign-ups exceed the figure, then the fourth is refused', async () => {
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await t.request('POST', '/auth/register/public', as(ip, { body: { email: uniqueEmail('real'), password: DEFAULT_PASSWORD, name: 'Real' } }));
      statuses.push(r.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});
