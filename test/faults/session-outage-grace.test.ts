import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, stopStartedClis } from '../helpers/cli.js';
import { BACKENDS, installBackend, login, request, serve, timeUntil, type FaultBackend } from './fault-harness.js';

/*
 * Sessions during a database outage (docs/operations.md, "The database"): a session and its user known
 * valid before the outage keep validating from memory (and Redis) for SESSION_OUTAGE_GRACE after it
 * began, then validation answers 503 with Retry-After until the database returns. One outage per
 * backend, watched by servers side by side on the same installation: A with the default grace (5
 * minutes), C with 20 s, and on PostgreSQL B, a second instance with the default grace that never saw
 * the session before the outage (it can only answer from Redis).
 */

afterEach(stopStartedClis);
afterAll(removeTempDirs);

const OUTAGE_MS = 60_000;
const SHORT_GRACE_S = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Seen {
  /** Milliseconds since the database was cut (negative before). */
  at: number;
  status: number;
  retryAfter: string | null;
  body: string;
}

/** Validates `session` on `url` one request after another, `everyMs` apart, until `stop()`; returns what it saw. */
async function validateEvery(url: string, session: string, everyMs: number, clock: () => number, stop: () => boolean): Promise<Seen[]> {
  const seen: Seen[] = [];
  while (!stop()) {
    const at = clock();
    const a = await request(url, 'GET', '/auth/validation', { session, timeoutMs: 30_000 });
    seen.push({ at, status: a.status, retryAfter: a.retryAfter, body: a.body.slice(0, 200) });
    await sleep(everyMs);
  }
  return seen;
}

const statuses = (seen: Seen[]) => seen.reduce<Record<string, number>>((o, s) => ((o[s.status] = (o[s.status] ?? 0) + 1), o), {});

describe.each(BACKENDS)('sessions during a 60 s database outage on %s', (kind) => {
  let b: FaultBackend;
  afterEach(async () => {
    await b?.databaseUp();
    await b?.drop();
  });

  it(
    `when the database is down for 60 s and a session is validated every 200 ms, then every answer is 200 (from memory${kind === 'pg' ? ', and from Redis on an instance that never saw it' : ''}); with SESSION_OUTAGE_GRACE=${SHORT_GRACE_S}s the answers turn 503 with Retry-After after it, and 200 again once the database is back`,
    async () => {
      b = await installBackend(kind);
      const env = { RATE_LIMITS_ENABLED: 'false' };
      const [a, c, other] = await Promise.all([
        serve(b, env),
        serve(b, { ...env, SESSION_OUTAGE_GRACE: `${SHORT_GRACE_S}s` }),
        kind === 'pg' ? serve(b, env) : Promise.resolve(null),
      ]);
      const sessionA = await login(a.url);
      const sessionC = await login(c.url);

      let downAt = Date.now() + 3_000;
      const clock = () => Date.now() - downAt;
      let stopped = false;
      const stop = () => stopped;
      const seenA = validateEvery(a.url, sessionA, 200, clock, stop);
      const seenC = validateEvery(c.url, sessionC, 200, clock, stop);
      await sleep(3_000);
      await b.databaseDown();
      downAt = Date.now();

      // B validates A's session only from 10 s into the outage: nothing of it is in B's memory then.
      let seenB: Promise<Seen[]> = Promise.resolve([]);
      if (other) seenB = sleep(10_000).then(() => validateEvery(other.url, sessionA, 1_000, clock, () => stopped || clock() >= OUTAGE_MS));

      while (clock() < OUTAGE_MS) {
        await sleep(1_000);
        expect(a.s.child.exitCode, a.s.stderr).toBeNull();
      }
      await b.databaseUp();
      const upAt = clock();
      const backMs = await timeUntil(async () => (await request(c.url, 'GET', '/auth/validation', { session: sessionC })).status === 200, 15_000);
      await sleep(3_000);
      stopped = true;
      const [fromA, fromB, fromC] = await Promise.all([seenA, seenB, seenC]);

      const during = (seen: Seen[]) => seen.filter((s) => s.at >= 0 && s.at < upAt);
      console.log(
        `[faults] ${kind}: session outage grace: A (5m) ${JSON.stringify(statuses(fromA))} (${during(fromA).length} during the outage)` +
          `${other ? `; B (cold, Redis) ${JSON.stringify(statuses(fromB))}` : ''}; C (${SHORT_GRACE_S}s) during ${JSON.stringify(statuses(during(fromC)))}` +
          `, first 503 at ${((during(fromC).find((s) => s.status === 503)?.at ?? NaN) / 1000).toFixed(1)} s; C back ${backMs} ms after recovery`,
      );

      // A: every answer 200, before, throughout and after the outage.
      expect(during(fromA).length).toBeGreaterThan(100);
      expect(fromA.filter((s) => s.status !== 200).slice(0, 5)).toEqual([]);
      // B: a cold instance answered from Redis (session and user copies) throughout.
      if (other) {
        expect(fromB.length).toBeGreaterThan(20);
        expect(fromB.filter((s) => s.status !== 200).slice(0, 5)).toEqual([]);
      }
      // C: 200 well within the grace (the outage is noticed within seconds), 503 with Retry-After well after it, nothing else.
      expect(fromC.filter((s) => s.at < 12_000 && s.status !== 200).slice(0, 5)).toEqual([]);
      const late = during(fromC).filter((s) => s.at >= (SHORT_GRACE_S + 15) * 1000);
      expect(late.length).toBeGreaterThan(20);
      expect(late.filter((s) => !(s.status === 503 && s.retryAfter)).slice(0, 5)).toEqual([]);
      expect(
        during(fromC)
          .filter((s) => s.status !== 200 && s.status !== 503)
          .slice(0, 5),
      ).toEqual([]);
      // Back to normal once the database returned.
      expect(fromC.filter((s) => s.at >= upAt + backMs).every((s) => s.status === 200)).toBe(true);
      expect(backMs).toBeLessThanOrEqual(10_000);

      for (const p of [a, c, ...(other ? [other] : [])]) {
        expect(p.s.child.exitCode, p.s.stderr).toBeNull();
        p.s.child.kill('SIGTERM');
        expect((await p.s.exited).code).toBe(0);
      }
    },
    OUTAGE_MS + 180_000,
  );
});
