import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { WebClient } from '../helpers/web-client.js';

// What keeps the console's dashboard cheap at scale (docs/console.md "At scale"): active sessions are
// counted exactly only up to a cap (then estimated on PostgreSQL), and the aggregates are read at most
// once a minute, so later dashboards do not wait for them.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

/** Inserts `n` sessions of one user directly, expired an hour ago or live for a day. */
async function insertSessions(userId: string, n: number, expired: boolean, on: TestApp = t): Promise<void> {
  const now = Date.now();
  const rows = Array.from({ length: n }, () => ({
    id: randomUUID(),
    token_hash: randomBytes(32).toString('hex'),
    session_prefix: 'ses_bulk',
    user_id: userId,
    status: 'active',
    two_factor_verified: false,
    created_at: new Date(now - 7200_000),
    last_used_at: new Date(now - 7200_000),
    expires_at: new Date(expired ? now - 3600_000 : now + 86400_000),
  }));
  await on.app.sequelize.getQueryInterface().bulkInsert('sessions', rows);
}

describe('active sessions, counted up to a cap', () => {
  it('when fewer live sessions than the cap, then the count is exact and leaves out expired ones', async () => {
    const user = await makeUser(t, { email: uniqueEmail('count') });
    await insertSessions(user.id, 12, false);
    await insertSessions(user.id, 7, true);
    const now = new Date();
    const exact = await t.app.repos.sessions.countActive(now);
    expect(exact).toBeGreaterThanOrEqual(12);
    expect(await t.app.repos.sessions.countActiveCapped(now, exact + 50)).toEqual({ total: exact, exact: true });
  });

  it('when more live sessions than the cap, then PostgreSQL estimates (never below the cap + 1); SQLite counts', async () => {
    const user = await makeUser(t, { email: uniqueEmail('many') });
    await insertSessions(user.id, 30, false);
    const now = new Date();
    const exact = await t.app.repos.sessions.countActive(now);
    const r = await t.app.repos.sessions.countActiveCapped(now, 5);
    if (BACKEND === 'pg') {
      expect(r.exact).toBe(false);
      expect(r.total).toBeGreaterThanOrEqual(6);
    } else {
      expect(r).toEqual({ total: exact, exact: true });
    }
  });
});

describe('the dashboard at scale', () => {
  it('when the dashboard is opened again within the minute, then its aggregates come from the first read (no new count)', async () => {
    const app = await startTestApp();
    try {
      const admin = await makeUser(app, { email: uniqueEmail('admin'), user_type: 'admin' });
      const c = new WebClient(app.url);
      expect((await c.submit('/login', '/login', { email: admin.email, password: DEFAULT_PASSWORD })).status).toBe(303);
      const figure = (html: string) => /Active sessions<\/h2><p class="big">([^<]*)</.exec(html)?.[1];
      const first = await c.get('/admin');
      expect(first.status).toBe(200);
      const before = figure(first.text);
      expect(before).toMatch(/^\d+$/); // a handful: counted exactly, no "≈"
      await insertSessions(admin.id, 9, false, app);
      const again = await c.get('/admin');
      expect(figure(again.text)).toBe(before);
      // The live count did move: the dashboard shows the figure read at most a minute ago.
      expect(await app.app.repos.sessions.countActive(new Date())).toBe(Number(before) + 9);
    } finally {
      await app.close();
    }
  });
});
