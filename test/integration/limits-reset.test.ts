import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetLimits } from '../../src/services/limit-reset.js';
import { DEFAULT_PASSWORD, makeUser } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/* What `gatehouse limits reset` does, on the backend of this run (in-process, or Redis shared by instances). */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_DEFAULT: '2/1m', RATE_LIMIT_LOGIN_ACCOUNT: '8/1h' } });
});
afterAll(async () => t?.close());

const login = (email: string, password: string) => t.request('POST', '/auth/login', { body: { email, password } });

describe('limits reset', () => {
  it('when an account is locked after failed logins, then --email with --ip lets its owner in again, and nothing else is needed', async () => {
    const user = await makeUser(t);
    for (let i = 0; i < 5; i++) expect((await login(user.email, 'Wrong-Password-1')).status).toBe(401);
    const locked = await login(user.email, DEFAULT_PASSWORD);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const cleared = await resetLimits(t.app, { email: user.email.toUpperCase(), ip: '127.0.0.1' });
    expect(cleared).toHaveLength(3);
    expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(200);
  });

  it("when the account's budget from all sources is spent, then --email alone restores it", async () => {
    const user = await makeUser(t);
    // Successful logins spend the all-sources budget (8 an hour here) without any lock.
    for (let i = 0; i < 8; i++) expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(200);
    expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(429);
    await resetLimits(t.app, { email: user.email });
    expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(200);
  });

  it("when an address has spent a route class's budget, then --ip restores it for that address", async () => {
    const path = `/nope/${Date.now()}`;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.request('GET', path)).status);
    expect(statuses).toEqual([404, 404, 429]);
    await resetLimits(t.app, { ip: '127.0.0.1' });
    expect((await t.request('GET', path)).status).toBe(404);
  });

  it('when the address is not an IP, then nothing is touched and the error says so', async () => {
    await expect(resetLimits(t.app, { ip: 'localhost' })).rejects.toThrow('not an IP address: localhost');
  });
});
