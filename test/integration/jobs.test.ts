import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScheduler } from '../../src/jobs/scheduler.js';
import { sessionExpiryJob, type JobDef } from '../../src/jobs/core-jobs.js';
import { captureLog, startTestApp, type TestApp } from '../helpers/test-app.js';
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

  it('when a run changes nothing, then "job finished" is a debug line; a run that did work stays at info', async () => {
    const log = captureLog();
    const t = await startTestApp({ env: { LOG_LEVEL: 'debug' }, logTo: log.stream });
    try {
      let n = 0;
      const job: JobDef = { name: `quiet-${Date.now()}`, schedule: '* * * * *', run: async () => `${n++} scheduled posts published` };
      const s = startScheduler(t.app, []);
      await s.runNow(job, new Date('2026-11-21T10:00:00Z'));
      await s.runNow(job, new Date('2026-11-21T10:01:00Z'));
      await s.stop();
      const finished = log
        .text()
        .split('\n')
        .filter((l) => l.includes('job finished'))
        .map((l) => JSON.parse(l) as { level: number; detail: string });
      expect(finished.map((l) => [l.level, l.detail])).toEqual([
        [20, '0 scheduled posts published'],
        [30, '1 scheduled posts published'],
      ]);
    } finally {
      await t.close();
    }
  });
});
