import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckContext, type Check } from '../../src/cli/checks/check.js';
import { searchIndexCheck } from '../../src/cli/checks/search-index.js';
import { sessionBacklogCheck } from '../../src/cli/checks/session-backlog.js';
import { sessionExpiryJob } from '../../src/jobs/core-jobs.js';
import { startScheduler } from '../../src/jobs/scheduler.js';
import { BACKEND } from '../helpers/backend.js';
import { makeSession, makeUser } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  // JOBS_ENABLED only informs the doctor here: test apps start no scheduler of their own.
  t = await startTestApp({ env: { SESSION_EXPIRY_BATCH: '100', SESSION_EXPIRY_MAX_PER_RUN: '1000', JOBS_ENABLED: 'true' } });
});
afterAll(async () => t?.close());

/** Inserts `n` sessions of one user directly, expired an hour ago or live for a day. */
async function insertSessions(userId: string, n: number, expired: boolean): Promise<void> {
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
  const qi = t.app.sequelize.getQueryInterface();
  for (let i = 0; i < rows.length; i += 500) await qi.bulkInsert('sessions', rows.slice(i, i + 500));
}

const doctor = (check: Check) => check.run(createCheckContext({ config: t.app.config, logger: t.app.logger, openApp: async () => t.app }));

let tick = Date.UTC(2030, 0, 1);
const nextTick = () => new Date((tick += 60_000));

describe(`session expiry at scale (${BACKEND})`, () => {
  it('when more expired sessions are stored than one run may delete, then a run deletes its cap in batches, the doctor warns, the next run finishes', async () => {
    const user = await makeUser(t);
    await insertSessions(user.id, 1250, true);
    await insertSessions(user.id, 20, false);
    expect(await t.app.services.sessions.expiredBacklog()).toBe(1250);
    expect(await doctor(sessionBacklogCheck)).toMatchObject({ status: 'warn', message: expect.stringContaining('1,250 expired sessions') });

    const s = startScheduler(t.app, []);
    try {
      expect(await s.runNow(sessionExpiryJob, nextTick())).toEqual({ ran: true, detail: '1000 expired sessions deleted' });
      expect(await t.app.services.sessions.expiredBacklog()).toBe(250);
      expect(await doctor(sessionBacklogCheck)).toMatchObject({ status: 'ok', message: expect.stringContaining('250 expired sessions') });
      expect(await s.runNow(sessionExpiryJob, nextTick())).toEqual({ ran: true, detail: '250 expired sessions deleted' });
    } finally {
      await s.stop();
    }
    expect(await t.app.services.sessions.expiredBacklog()).toBe(0);
    expect(await t.app.repos.sessions.listByUser(user.id)).toHaveLength(20);
    expect(await doctor(sessionBacklogCheck)).toMatchObject({ status: 'ok', message: 'none' });
  });

  it('when the prune runs, then validation of live sessions goes on answering throughout', async () => {
    const user = await makeUser(t);
    await insertSessions(user.id, 1000, true);
    const live = await makeSession(t);
    let pruning = true;
    const prune = t.app.services.sessions.pruneExpired({ batch: 100 }).finally(() => (pruning = false));
    const statuses: number[] = [];
    while (pruning || statuses.length < 5) {
      statuses.push((await t.request('GET', '/auth/validation', { session: live.token })).status);
    }
    expect(await prune).toBe(1000);
    expect(new Set(statuses)).toEqual(new Set([200]));
  });

  it('when an expired session is presented after the prune, then it is refused like any other', async () => {
    const { token, user } = await makeSession(t);
    const [row] = await t.app.repos.sessions.listByUser(user.id);
    await t.app.repos.sessions.update(row.id, { expires_at: new Date(Date.now() - 1000) });
    await t.app.services.sessions.pruneExpired({ batch: 100 });
    const r = await t.request('GET', '/auth/validation', { session: token });
    expect(r.status).toBe(401);
  });
});

describe(`doctor: admin search indexes (${BACKEND})`, () => {
  it('when the schema is migrated, then the check is ok; on PostgreSQL, with pg_trgm dropped, it fails and says how to put it back', async () => {
    const r = await doctor(searchIndexCheck);
    expect(r.status).toBe('ok');
    expect(r.message).toMatch(BACKEND === 'pg' ? /^pg_trgm [\d.]+; trigram index on email, name, last_name, user_name \(users.search_text\)$/ : /^SQLite/);
    if (BACKEND !== 'pg') return;
    await t.app.sequelize.query('DROP EXTENSION pg_trgm CASCADE');
    const missing = await doctor(searchIndexCheck);
    expect(missing).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('pg_trgm extension is missing'),
      hint: expect.stringContaining('CREATE EXTENSION pg_trgm'),
    });
    // Search still answers, by reading the table.
    const admin = await makeSession(t, { user_type: 'admin' });
    expect((await t.request('GET', '/auth/admin/users?q=example', { session: admin.token })).status).toBe(200);
  });
});
