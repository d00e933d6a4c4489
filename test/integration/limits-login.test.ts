import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { DEFAULT_PASSWORD, makeUser } from '../helpers/factories.js';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/test-app.js';

const parallel = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));

/** A login as if from `ip` (the test apps trust one proxy hop). */
const login = (t: TestApp, email: string, password: string, ip: string) =>
  t.request('POST', '/auth/login', { body: { email, password }, headers: { 'X-Forwarded-For': ip } });

const statuses = (rs: TestResponse[]) => rs.map((r) => r.status).sort((a, b) => a - b);
const count = (rs: TestResponse[], status: number) => rs.filter((r) => r.status === status).length;

function expectRateLimited(r: TestResponse): void {
  expect(r.status).toBe(429);
  expect(r.body).toMatchObject({ success: false, code: 'RATE_LIMITED' });
  expect(typeof r.body.error).toBe('string');
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(r.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
}

describe('login: per-address class', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { TRUST_PROXY: '1', RATE_LIMIT_LOGIN: '5/15m' } });
  });
  afterAll(async () => t?.close());

  it('when 50 logins arrive in parallel from one address, then exactly 5 are checked and 45 get 429', async () => {
    const rs = await parallel(50, (i) => login(t, `nobody${i}@example.test`, 'wrong-password', '198.51.100.10'));
    expect(count(rs, 401)).toBe(5);
    expect(count(rs, 429)).toBe(45);
    for (const r of rs.filter((x) => x.status === 429)) expectRateLimited(r);
    expect(rs.every((r) => r.headers.get('x-ratelimit-limit') === '5')).toBe(true);
  });

  it('when a malformed login body arrives, then it is counted in default, not in the login class', async () => {
    const r = await t.request('POST', '/auth/login', { raw: '{"email":', headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': '198.51.100.11' } });
    expect(r.status).toBe(400);
    expect(r.headers.get('x-ratelimit-limit')).toBe('100000');
    const next = await login(t, 'nobody@example.test', 'wrong-password', '198.51.100.11');
    expect(next.headers.get('x-ratelimit-limit')).toBe('5');
    expect(next.headers.get('x-ratelimit-remaining')).toBe('4');
  });
});

describe('login: per-account budgets', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Three tries per account per source network, nine per account from everywhere.
    t = await startTestApp({ env: { TRUST_PROXY: '1', RATE_LIMIT_LOGIN: '3/15m', RATE_LIMIT_LOGIN_ACCOUNT: '9/15m' } });
  });
  afterAll(async () => t?.close());

  it('when one network rotates addresses to hammer one account, then it gets the Login figure and no more', async () => {
    const victim = await makeUser(t);
    // 30 distinct addresses in one /24: each has a fresh per-address budget.
    const rs = await parallel(30, (i) => login(t, victim.email!, 'wrong-password', `203.0.113.${i + 1}`));
    expect(count(rs, 401)).toBe(3);
    expect(count(rs, 429)).toBe(27);
    for (const r of rs.filter((x) => x.status === 429)) expectRateLimited(r);
  });

  it('when one network has spent its share on an account, then the owner elsewhere still logs in (no lock-out from everywhere)', async () => {
    const victim = await makeUser(t);
    const attack = await parallel(40, (i) => login(t, victim.email!.toUpperCase(), 'wrong-password', `192.0.2.${i + 1}`));
    expect(count(attack, 401)).toBe(3);
    const owner = await login(t, victim.email!, DEFAULT_PASSWORD, '198.51.100.200');
    expect(owner.status).toBe(200);
    expect(owner.body.success).toBe(true);
  });

  it('when many networks spray one account, then the account-wide budget caps the guesses at 9 in all', async () => {
    const victim = await makeUser(t);
    // 10 networks x 3 addresses each, all at once.
    const rs = await parallel(30, (i) => login(t, victim.email!, 'wrong-password', `10.${Math.floor(i / 3)}.0.${(i % 3) + 1}`));
    expect(count(rs, 401)).toBe(9);
    expect(count(rs, 429)).toBe(21);
    const later = await login(t, victim.email!, DEFAULT_PASSWORD, '172.16.5.5');
    expectRateLimited(later);
  });

  it('when the identifier differs only in case or surrounding space, then it is the same account budget', async () => {
    const victim = await makeUser(t);
    const spellings = [victim.email!, victim.email!.toUpperCase(), `  ${victim.email!}  `, victim.email!.replace(/^./, (c) => c.toUpperCase())];
    const rs = await Promise.all(spellings.map((e, i) => login(t, e, 'wrong-password', `100.64.1.${i + 1}`)));
    expect(statuses(rs)).toEqual([401, 401, 401, 429]);
  });
});

describe('login: failed-login backoff', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    // Budgets high enough that only the backoff (5 free failures) decides.
    a = await startTestApp({ env: { TRUST_PROXY: '1', RATE_LIMIT_LOGIN: '1000/15m' } });
    b = await startTestApp({ sharing: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('when 50 wrong passwords race in parallel from one network, then exactly 5 are checked before the backoff closes', async () => {
    const victim = await makeUser(a);
    const rs = await parallel(50, (i) => login(a, victim.email!, 'wrong-password', `198.18.0.${i + 1}`));
    expect(count(rs, 401)).toBe(5);
    expect(count(rs, 429)).toBe(45);
    // Locked for this network, even with the right password...
    expectRateLimited(await login(a, victim.email!, DEFAULT_PASSWORD, '198.18.0.99'));
    // ...but not for the owner elsewhere.
    expect((await login(a, victim.email!, DEFAULT_PASSWORD, '198.19.7.7')).status).toBe(200);
  });

  it(
    BACKEND === 'pg'
      ? 'when the race is spread over two instances sharing Redis, then the backoff still admits exactly 5'
      : 'when the race is spread over two instances without Redis, then each instance keeps its own backoff (5 each)',
    async () => {
      const victim = await makeUser(a);
      const rs = await parallel(50, (i) => login(i % 2 ? a : b, victim.email!, 'wrong-password', `198.18.1.${i + 1}`));
      expect(count(rs, 401)).toBe(BACKEND === 'pg' ? 5 : 10);
      expect(count(rs, 401) + count(rs, 429)).toBe(50);
    },
  );

  it('when the password is right after a few failures, then the login succeeds and the failures are forgotten', async () => {
    const user = await makeUser(a);
    for (let i = 0; i < 4; i++) expect((await login(a, user.email!, 'wrong-password', '198.18.2.1')).status).toBe(401);
    expect((await login(a, user.email!, DEFAULT_PASSWORD, '198.18.2.1')).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await login(a, user.email!, 'wrong-password', '198.18.2.1')).status).toBe(401);
  });
});
