import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScheduler } from '../../src/jobs/scheduler.js';
import { sessionExpiryJob, type JobDef } from '../../src/jobs/core-jobs.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeSession } from '../helpers/factories.js';

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await startTestApp();
  b = await startTestApp({ sharing: a });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

describe('scheduled jobs', () => {
  it('when two instances fire the same tick, then the job runs once', async () => {
    let runs = 0;
    const job: JobDef = { name: `count-${Date.now()}`, schedule: '* * * * *', run: async () => `run ${++runs}` };
    const sa = startScheduler(a.app, []);
    const sb = startScheduler(b.app, []);
    const tick = new Date('2026-11-21T10:00:00Z');
    const results = await Promise.all([sa.runNow(job, tick), sb.runNow(job, tick), sa.runNow(job, tick)]);
    expect(results.filter((r) => r.ran)).toHaveLength(1);
    expect(runs).toBe(1);
    const next = await sb.runNow(job, new Date('2026-11-21T10:01:00Z'));
    expect(next.ran).toBe(true);
    expect(runs).toBe(2);
    await sa.stop();
    await sb.stop();
  });

  it('when sessions have expired, then the expiry job deletes them and they stop validating', async () => {
    const live = await makeSession(a);
    const dead = await makeSession(a);
    await a.app.repos.sessions.update((await a.app.repos.sessions.listByUser(dead.user.id))[0].id, { expires_at: new Date(Date.now() - 1000) });
    const s = startScheduler(a.app, []);
    const r = await s.runNow(sessionExpiryJob, new Date(Date.now() + 3600_000 * 24 * 365));
    expect(r.ran).toBe(true);
    expect(r.detail).toMatch(/^\d+ expired sessions deleted$/);
    expect(await a.app.repos.sessions.listByUser(dead.user.id)).toHaveLength(0);
    expect(await a.app.repos.sessions.listByUser(live.user.id)).toHaveLength(1);
    await s.stop();
  });
});
