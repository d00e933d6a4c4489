import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, TEST_BRIDGE_SECRET, type TestApp, type TestResponse } from '../helpers/test-app.js';

/** The shipped figures of the classes under test (the test helper raises every figure otherwise). */
const SHIPPED = {
  RATE_LIMIT_DEFAULT: '300/5m',
  RATE_LIMIT_BRIDGE: '10000000/5m',
  RATE_LIMIT_BRIDGE_INVALID: '10/15m',
  RATE_LIMIT_SESSION: '600/5m',
};

const statuses = (rs: TestResponse[]) => rs.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});

/** `total` calls, `width` at a time (a backend's connection pool). */
async function inWaves<T>(total: number, width: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < total; i += width) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(width, total - i) }, (_, j) => fn(i + j)))));
  }
  return out;
}

describe('trusted backends and sessions (shipped figures)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: SHIPPED });
  });
  afterAll(async () => t?.close());

  it('when a backend validates 3,000 times from one address (50/s for a minute) with the right secret, then none is refused', async () => {
    const { token } = await makeSession(t);
    const rs = await inWaves(3000, 50, (i) =>
      i % 2
        ? t.request('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: token } })
        : t.request('GET', '/auth/user/me', { bridge: true, session: token }),
    );
    expect(statuses(rs)).toEqual({ 200: 3000 });
    const last = rs[rs.length - 1];
    expect(last.headers.get('x-ratelimit-limit')).toBe('10000000');
    expect(Number(last.headers.get('x-ratelimit-remaining'))).toBe(10000000 - 3000);
    // The default budget of the address was not touched by any of it (read on a path of the default class; the probes are not limited).
    expect((await t.request('GET', '/nope/default-class')).headers.get('x-ratelimit-remaining')).toBe('299');
  });

  it('when a wrong secret is sent, then it is refused after 10 tries from that address, while the right one still passes', async () => {
    const { token } = await makeSession(t);
    const wrong = await inWaves(15, 5, () =>
      t.request('POST', '/auth/bridge/validate', { headers: { 'X-Bridge-Secret': 'guess-guess-guess-guess' }, body: { session_id: token } }),
    );
    expect(statuses(wrong)).toEqual({ 401: 10, 429: 5 });
    expect(wrong.find((r) => r.status === 429)!.body).toMatchObject({ code: 'RATE_LIMITED' });
    expect(wrong[0].headers.get('x-ratelimit-limit')).toBe('10');
    // Guessing on another validation read shares the same small budget.
    const onMe = await t.request('GET', '/auth/user/me', { headers: { 'X-Bridge-Secret': 'another-guess-0000000' }, session: token });
    expect(onMe.status).toBe(429);
    const right = await t.request('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: token } });
    expect(right.status).toBe(200);
  });

  it('when two hundred users behind one address validate twice each, then all pass, each counted on its own session', async () => {
    const sessions = await inWaves(200, 20, () => makeSession(t));
    const rs = await inWaves(400, 50, (i) => t.request('GET', '/auth/validation', { session: sessions[i % 200].token }));
    expect(statuses(rs)).toEqual({ 200: 400 });
    expect(rs[0].headers.get('x-ratelimit-limit')).toBe('600');
    const me = await t.request('GET', '/auth/me', { session: sessions[0].token });
    expect(me.status).toBe(200);
    expect(me.headers.get('x-ratelimit-remaining')).toBe(String(600 - 3));
  });

  it('when validation fails (no session, an unknown one), then the failures are counted per address in default', async () => {
    const before = Number((await t.request('GET', '/nope/default-class')).headers.get('x-ratelimit-remaining'));
    const r = await t.request('GET', '/auth/validation', { session: 'ses_unknown_token' });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('Invalid session');
    expect(r.headers.get('x-ratelimit-limit')).toBe('300');
    expect(Number(r.headers.get('x-ratelimit-remaining'))).toBe(before - 1);
  });

  it('when a route with a class of its own gets the right secret, then it keeps its class (login, registration)', async () => {
    const user = await makeUser(t);
    const login = await t.request('POST', '/auth/login', { bridge: true, body: { email: user.email, password: DEFAULT_PASSWORD } });
    expect(login.status).toBe(200);
    expect(login.headers.get('x-ratelimit-limit')).toBe('100000'); // the test helper's login figure, not the bridge one
    expect(Number(login.headers.get('x-ratelimit-remaining'))).toBe(100000 - 1);
    const reg = await t.request('POST', '/auth/register/public', { bridge: true, body: { email: uniqueEmail(), password: DEFAULT_PASSWORD } });
    expect(reg.status).toBe(200);
    expect(Number(reg.headers.get('x-ratelimit-remaining'))).toBe(100000 - 1);
  });
});

describe('one session past its budget', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_SESSION: '5/1h', RATE_LIMIT_DEFAULT: '1000/1h' } });
  });
  afterAll(async () => t?.close());

  it('when one session validates past RATE_LIMIT_SESSION, then it alone is refused; another session and other routes go on', async () => {
    const a = await makeSession(t);
    const b = await makeSession(t);
    const rs = await inWaves(8, 4, () => t.request('GET', '/auth/validation', { session: a.token }));
    expect(statuses(rs)).toEqual({ 200: 5, 429: 3 });
    expect((await t.request('GET', '/auth/validation', { session: b.token })).status).toBe(200);
    expect((await t.request('GET', '/nope/default-class')).status).toBe(404);
  });

  it('when the session has run out, then the bridge secret still validates it (the backend has its own budget)', async () => {
    const a = await makeSession(t);
    await inWaves(6, 6, () => t.request('GET', '/auth/validation', { session: a.token }));
    expect((await t.request('GET', '/auth/validation', { session: a.token })).status).toBe(429);
    const bridged = await t.request('GET', '/auth/validation', { session: a.token, headers: { 'X-Bridge-Secret': TEST_BRIDGE_SECRET } });
    expect(bridged.status).toBe(200);
  });
});
