import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionPg, type ProvisionedBackend } from '../helpers/backend.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * PostgreSQL going away under a running service. The app reaches this run's PostgreSQL through a
 * TCP relay the test cuts and restores: the app sees exactly what a stopped or unreachable server
 * looks like (connections reset, then refused), while the shared server other jobs use stays up.
 * The embedded SQLite file has no such outage; its lock contention is covered in faults-sqlite.
 */
const UNAVAILABLE = { success: false, error: 'Service temporarily unavailable', code: 'SERVICE_UNAVAILABLE' };

describe('when PostgreSQL goes away (PostgreSQL + Redis tier only: *.pg.test.ts)', () => {
  let db: ProvisionedBackend;
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    db = await provisionPg();
    const direct = new URL(db.env.DATABASE_URL);
    proxy = await startTcpProxy(Number(direct.port || 5432), direct.hostname);
    direct.port = String(proxy.port);
    // Production-like login limits: 5 attempts per 15 minutes per account.
    t = await startTestApp({ env: { ...db.env, DATABASE_URL: direct.toString(), RATE_LIMIT_LOGIN: '5/15m' } });
  });
  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await t?.close();
    await proxy?.close();
    await db?.drop();
  });

  it('then writes and cold reads answer 503 with Retry-After, warm sessions still validate, login attempts do not count, and it recovers without a restart', async () => {
    const warm = await makeSession(t);
    expect((await t.request('GET', '/auth/validation', { session: warm.token })).status).toBe(200);
    const user = await makeUser(t);
    const cold = await t.app.services.sessions.create(user.id, {});

    await proxy.cut();
    const statuses: Record<string, number[]> = {};
    const record = (what: string, status: number) => (statuses[what] ??= []).push(status);

    expect((await t.request('GET', '/health')).status).toBe(200);
    const ready = await t.request('GET', '/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.database).toBe('fail');

    const reg = await t.request('POST', '/auth/register/public', {
      body: { email: uniqueEmail(), password: DEFAULT_PASSWORD, name: 'A', lastName: 'B' },
    });
    record('register', reg.status);
    expect(reg.status).toBe(503);
    expect(reg.body).toEqual(UNAVAILABLE);
    expect(Number(reg.headers.get('retry-after'))).toBeGreaterThan(0);

    const profile = await t.request('PUT', '/auth/user/me', { session: warm.token, body: { name: 'Changed' } });
    record('profile update', profile.status);
    expect(profile.status).toBe(503);
    expect(profile.body).toEqual(UNAVAILABLE);

    for (let i = 0; i < 5; i++) {
      const w = await t.request('GET', '/auth/validation', { session: warm.token });
      record('validation (cached)', w.status);
      expect(w.status).toBe(200);
    }
    const c = await t.request('GET', '/auth/validation', { session: cold.token });
    record('validation (not cached)', c.status);
    expect(c.status).toBe(503);
    expect(c.body).toEqual(UNAVAILABLE);

    // More attempts than the account's budget, all while the database is down.
    for (let i = 0; i < 7; i++) {
      const l = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
      record('login', l.status);
      expect(l.status).toBe(503);
      expect(l.body).toEqual(UNAVAILABLE);
    }

    await proxy.restore();
    // Back without a restart, within a probe of the health tracker (every 0.5 s at most during an outage).
    await expect.poll(async () => (await t.request('GET', '/ready')).status, { timeout: 2_000, interval: 50 }).toBe(200);
    const back = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    expect(back.status).toBe(200);
    expect((await t.request('GET', '/auth/validation', { session: cold.token })).status).toBe(200);
    expect((await t.request('GET', '/ready')).status).toBe(200);
    expect(statuses).toMatchObject({ register: [503], login: Array(7).fill(503) });
    console.info(`[faults] PostgreSQL cut: ${JSON.stringify(statuses)}`);
  });
});
