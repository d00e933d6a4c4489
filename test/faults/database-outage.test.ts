import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, stopStartedClis } from '../helpers/cli.js';
import { BACKENDS, installBackend, load, logLines, login, request, serve, Tally, timeUntil, type Answer, type FaultBackend } from './fault-harness.js';

afterEach(stopStartedClis);
afterAll(removeTempDirs);

const OUTAGE_MS = Number(process.env.FAULT_OUTAGE_MS ?? 60_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isUp = (a: Answer) => a.status === 200;
const isJsonLine = (l: string) => {
  try {
    return typeof JSON.parse(l) === 'object';
  } catch {
    return false;
  }
};

describe.each(BACKENDS)('database outages on %s, every module installed', (kind) => {
  let b: FaultBackend;
  afterEach(async () => {
    await b?.databaseUp();
    await b?.drop();
  });

  it(
    'when the database is unavailable for 60 s under load with the blog job ticking every 5 s, then the process stays alive, answers only 200 or 503 with Retry-After, logs the outage once and is back within 2 s',
    async () => {
      b = await installBackend(kind);
      // Budgets out of the way: this measures outages, not limits.
      const { s, url } = await serve(b, { RATE_LIMITS_ENABLED: 'false' });
      const session = await login(url);
      const tally = new Tally();
      const bad: Answer[] = [];
      let stop = false;
      const paths = ['/auth/validation', '/auth/admin/users?limit=5', '/ready', '/api/v1/posts'];
      const running = load(
        3,
        () => stop,
        (i) => request(url, 'GET', paths[i % paths.length], { session }),
        tally,
        (a) => {
          if (!(a.status === 200 || (a.status === 503 && a.retryAfter))) bad.push(a);
        },
      );
      await sleep(3_000);
      await b.databaseDown();
      const downAt = Date.now();
      while (Date.now() - downAt < OUTAGE_MS) {
        await sleep(1_000);
        expect(s.child.exitCode, s.stderr).toBeNull();
      }
      await b.databaseUp();
      const backMs = await timeUntil(async () => isUp(await request(url, 'GET', '/auth/admin/users?limit=5', { session })), 10_000).catch((err: Error) => {
        throw new Error(
          `${err.message}\n${s.stdout
            .split('\n')
            .filter((l) => !l.includes('request completed'))
            .slice(-30)
            .join('\n')}\n${s.stderr}`,
        );
      });
      stop = true;
      await running;
      console.log(`[faults] ${kind}: 60 s outage answered ${JSON.stringify(tally)}; back ${backMs} ms after recovery`);

      expect(bad.slice(0, 5)).toEqual([]);
      expect(tally.counts.get('503') ?? 0).toBeGreaterThan(0);
      expect(backMs).toBeLessThanOrEqual(2_000);
      expect(s.child.exitCode).toBeNull();
      // One line when the outage begins and one when it ends: not one per 503.
      const errors = logLines(s.stdout, 50).map((l) => l.msg);
      expect(errors.filter((m) => /database unavailable/.test(m))).toHaveLength(1);
      expect(errors.filter((m) => !/database unavailable/.test(m))).toEqual([]);
      expect(logLines(s.stdout, 40).filter((l) => /database is back/.test(l.msg))).toHaveLength(1);
      // Every line a JSON log line: Sequelize's warning of a failed ROLLBACK or COMMIT was plain text.
      const notJson = (text: string) => text.split('\n').filter((l) => l.trim() && !isJsonLine(l));
      expect(notJson(s.stdout)).toEqual([]);
      expect(notJson(s.stderr)).toEqual([]);

      s.child.kill('SIGTERM');
      expect((await s.exited).code).toBe(0);
    },
    OUTAGE_MS + 120_000,
  );

  it('when serve starts while the database is down, then /health is 200, /ready and the API 503 with Retry-After, and it serves once the database is back, without a restart', async () => {
    b = await installBackend(kind);
    await b.databaseDown();
    const { s, url } = await serve(b);
    await s.waitFor(/database unreachable/);
    expect((await request(url, 'GET', '/health')).status).toBe(200);
    for (const p of ['/ready', '/auth/validation', '/auth/admin/users']) {
      const a = await request(url, 'GET', p);
      expect([a.status, a.retryAfter], p).toEqual([503, '5']);
    }
    const login503 = await request(url, 'POST', '/auth/login', { body: { email: 'x@example.com', password: 'whatever it is' } });
    expect(login503.status).toBe(503);
    await sleep(4_000);
    expect(s.child.exitCode).toBeNull();
    await b.databaseUp();
    const readyMs = await timeUntil(async () => isUp(await request(url, 'GET', '/ready')), 15_000);
    console.log(`[faults] ${kind}: started with the database down; ready ${readyMs} ms after it returned`);
    const session = await login(url);
    expect((await request(url, 'GET', '/auth/validation', { session })).status).toBe(200);
    s.child.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);
  }, 90_000);
});
