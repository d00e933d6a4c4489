import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRetentionJob, coreJobs } from '../../src/jobs/core-jobs.js';
import { startScheduler } from '../../src/jobs/scheduler.js';
import { eventAt } from '../helpers/audit-events.js';
import { makeUser } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { AUDIT_RETENTION_DAYS: '30' } });
});
afterAll(async () => {
  await t?.close();
});

const DAY = 86_400_000;

/** `n` events about `userId`, `daysAgo` days old. */
async function eventsAged(userId: string, daysAgo: number, n: number) {
  for (let i = 0; i < n; i++) {
    const at = new Date(Date.now() - daysAgo * DAY - i * 1000);
    await t.app.repos.audit.insert(eventAt(at, { type: 'sign_in.succeeded', user_id: userId, details: { daysAgo } }));
  }
}

const ages = async (userId: string) => (await t.app.services.audit.list({ userId, limit: 200 })).events.map((e) => e.details.daysAgo as number);

describe('the audit-retention job', () => {
  it('when events are older than AUDIT_RETENTION_DAYS, then one run of the scheduled job deletes them and keeps the rest', async () => {
    expect(coreJobs).toContain(auditRetentionJob);
    const user = await makeUser(t);
    await eventsAged(user.id, 400, 3);
    await eventsAged(user.id, 31, 2);
    await eventsAged(user.id, 29, 2);
    await eventsAged(user.id, 0, 1);
    const s = startScheduler(t.app, []);
    try {
      const r = await s.runNow(auditRetentionJob, new Date(Date.now() + 7 * DAY));
      expect(r.ran).toBe(true);
      expect(r.detail).toMatch(/^\d+ security events and \d+ webhook log entries older than 30 days deleted$/);
      expect(Number(r.detail!.split(' ')[0])).toBeGreaterThanOrEqual(5);
    } finally {
      await s.stop();
    }
    expect(await ages(user.id)).toEqual([0, 29, 29]);
  });

  it('when the backlog is larger than a batch, then batches follow each other up to the most one run may delete, and the rest waits', async () => {
    const user = await makeUser(t);
    await eventsAged(user.id, 100, 250);
    await eventsAged(user.id, 1, 1);
    const config = { ...t.app.config, sessionExpiryBatch: 100, sessionExpiryMaxPerRun: 220 };
    const first = await auditRetentionJob.run({ ...t.app, config });
    expect(first).toMatch(/^220 security events and \d+ webhook log entries older than 30 days deleted$/);
    expect(await ages(user.id)).toHaveLength(31);
    expect(await auditRetentionJob.run({ ...t.app, config })).toMatch(/^30 security events and/);
    expect(await ages(user.id)).toEqual([1]);
  });

  it('when AUDIT_RETENTION_DAYS is 0, then nothing is deleted', async () => {
    const user = await makeUser(t);
    await eventsAged(user.id, 5000, 2);
    expect(await auditRetentionJob.run({ ...t.app, config: { ...t.app.config, auditRetentionDays: 0 } })).toMatch(/kept forever/);
    expect(await ages(user.id)).toEqual([5000, 5000]);
  });
});
