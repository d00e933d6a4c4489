import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLoginBackoff, type LoginBackoffOptions } from '../../src/limits/login-backoff.js';
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter, type RedisClient } from '../../src/limits/rate-limiter.js';
import { TEST_REDIS_URL } from '../helpers/backend.js';

// The Redis cases run in the PostgreSQL + Redis tier only; the default run needs no server.
const REDIS_URL = TEST_REDIS_URL;

// Two clients stand for two app instances sharing one Redis.
let clientA: RedisClient;
let clientB: RedisClient;
let prefix = '';

beforeAll(async () => {
  if (!REDIS_URL) return;
  clientA = createClient({ url: REDIS_URL });
  clientB = createClient({ url: REDIS_URL });
  await Promise.all([clientA.connect(), clientB.connect()]);
});

afterAll(async () => {
  await Promise.all([clientA?.quit(), clientB?.quit()]);
});

beforeEach(() => {
  prefix = `gh-test-limits:${randomUUID()}:`;
});

afterEach(async () => {
  if (!REDIS_URL) return;
  const keys = await keysUnderPrefix();
  if (keys.length > 0) await clientA.del(keys);
});

async function keysUnderPrefix(): Promise<string[]> {
  const found: string[] = [];
  for await (const batch of clientA.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) found.push(...batch);
  return found;
}

interface Backend {
  name: string;
  limiter(instance?: 'A' | 'B'): RateLimiter;
  backoff(opts?: LoginBackoffOptions, instance?: 'A' | 'B'): ReturnType<typeof createLoginBackoff>;
}

const backends: Backend[] = [{ name: 'memory', limiter: () => createMemoryRateLimiter(), backoff: (opts) => createLoginBackoff('memory', opts) }];
const redisBackend: Backend = {
  name: 'redis',
  limiter: (instance = 'A') => createRedisRateLimiter(instance === 'A' ? clientA : clientB, prefix),
  backoff: (opts, instance = 'A') => createLoginBackoff({ client: instance === 'A' ? clientA : clientB, prefix }, opts),
};
if (REDIS_URL) backends.push(redisBackend);

describe.each(backends)('$name rate limiter', (backend) => {
  it('when 50 calls consume one key in parallel, then exactly the limit is admitted', async () => {
    const limiter = backend.limiter();
    const rule = { points: 7, durationSec: 60 };
    const results = await Promise.all(Array.from({ length: 50 }, () => limiter.consume('login', '203.0.113.9', rule)));
    const admitted = results.filter((r) => r.allowed);
    expect(admitted).toHaveLength(7);
    expect(admitted.map((r) => r.remaining).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(results.filter((r) => !r.allowed).every((r) => r.remaining === 0 && r.retryAfterSec >= 1)).toBe(true);
  });

  it('when a key consumes in sequence, then remaining counts down and resetAt is the stable end of the window', async () => {
    const limiter = backend.limiter();
    const rule = { points: 3, durationSec: 60 };
    const before = Date.now();
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await limiter.consume('login', 'acct:eve@example.com', rule));
    const after = Date.now();
    expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(new Set(results.map((r) => r.resetAt)).size).toBe(1);
    const resetAt = results[0].resetAt;
    expect(resetAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) + 60);
    expect(resetAt).toBeLessThanOrEqual(Math.ceil(after / 1000) + 60);
    expect(results[3].retryAfterSec).toBeGreaterThanOrEqual(59);
    expect(results[3].retryAfterSec).toBeLessThanOrEqual(60);
  });

  it('when the window passes, then the budget returns', async () => {
    const limiter = backend.limiter();
    const rule = { points: 2, durationSec: 1 };
    await limiter.consume('token_login', 'k', rule);
    await limiter.consume('token_login', 'k', rule);
    const refused = await limiter.consume('token_login', 'k', rule);
    expect(refused).toMatchObject({ allowed: false, retryAfterSec: 1 });
    await sleep(Math.max(0, refused.resetAt * 1000 - Date.now()) + 20);
    const fresh = await limiter.consume('token_login', 'k', rule);
    expect(fresh).toMatchObject({ allowed: true, remaining: 1 });
    expect(fresh.resetAt).toBeGreaterThan(refused.resetAt - 1);
  });

  it('when reset is called, then the key has its full budget again', async () => {
    const limiter = backend.limiter();
    const rule = { points: 1, durationSec: 60 };
    await limiter.consume('admin', 'k', rule);
    expect((await limiter.consume('admin', 'k', rule)).allowed).toBe(false);
    await limiter.reset('admin', 'k');
    expect((await limiter.consume('admin', 'k', rule)).allowed).toBe(true);
  });
});

describe.each(backends)('$name login backoff', (backend) => {
  const account = 'mallory@example.com';

  it('when 50 attempts reserve in parallel, then only the free attempts and then one per threshold are admitted', async () => {
    const backoff = backend.backoff();
    const fresh = await Promise.all(Array.from({ length: 50 }, () => backoff.reserve(account)));
    expect(fresh.filter((d) => d.allowed)).toHaveLength(5);
    for (let i = 0; i < 4; i++) await backoff.recordFailure(account);
    // The fifth reservation is still in flight: nothing more until it reports.
    const busy = await Promise.all(Array.from({ length: 50 }, () => backoff.reserve(account)));
    expect(busy.filter((d) => d.allowed)).toHaveLength(0);
    await backoff.recordSuccess(account);
    for (let i = 0; i < 4; i++) {
      expect((await backoff.reserve(account)).allowed).toBe(true);
      await backoff.recordFailure(account);
    }
    const atThreshold = await Promise.all(Array.from({ length: 50 }, () => backoff.reserve(account)));
    expect(atThreshold.filter((d) => d.allowed)).toHaveLength(1);
    expect(atThreshold[0].failures).toBe(4);
    await backoff.recordFailure(account);
    const locked = await Promise.all(Array.from({ length: 50 }, () => backoff.reserve(account)));
    expect(locked.filter((d) => d.allowed)).toHaveLength(0);
    expect(locked.every((d) => d.failures === 5 && d.retryAfterSec >= 29 && d.retryAfterSec <= 30)).toBe(true);
  });

  it('when a login succeeds, then the account starts over', async () => {
    const backoff = backend.backoff({ freeFailures: 2 });
    for (let i = 0; i < 2; i++) {
      await backoff.reserve(account);
      await backoff.recordFailure(account);
    }
    expect((await backoff.reserve(account)).allowed).toBe(false);
    await backoff.recordSuccess(account);
    const after = await Promise.all(Array.from({ length: 10 }, () => backoff.reserve(account)));
    expect(after.filter((d) => d.allowed)).toHaveLength(2);
    expect(after[0].failures).toBe(0);
  });

  it('when failures continue after each lock, then the lock doubles and is capped', async () => {
    let t = 1_800_000_000_000;
    const backoff = backend.backoff({ freeFailures: 1, baseDelaySec: 10, maxDelaySec: 50, now: () => t });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      expect((await backoff.reserve(account)).allowed).toBe(true);
      await backoff.recordFailure(account);
      const refused = await backoff.reserve(account);
      expect(refused.allowed).toBe(false);
      delays.push(refused.retryAfterSec);
      t += refused.retryAfterSec * 1000;
    }
    expect(delays).toEqual([10, 20, 40, 50, 50]);
  });
});

// Registered only in the tier that has Redis, so the default run reports no skipped tests.
if (REDIS_URL)
  describe('redis backends shared by two instances', () => {
    it('when two instances consume one key in parallel, then they share one budget', async () => {
      const a = redisBackend.limiter('A');
      const b = redisBackend.limiter('B');
      const rule = { points: 10, durationSec: 60 };
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).consume('login', '198.51.100.7', rule)));
      expect(results.filter((r) => r.allowed)).toHaveLength(10);
      expect(new Set(results.map((r) => r.resetAt)).size).toBe(1);
    });

    it('when two instances reserve one account at the threshold in parallel, then exactly one attempt is admitted', async () => {
      const a = redisBackend.backoff({}, 'A');
      const b = redisBackend.backoff({}, 'B');
      for (let i = 0; i < 4; i++) {
        await a.reserve('trent@example.com');
        await b.recordFailure('trent@example.com');
      }
      const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).reserve('trent@example.com')));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(1);
    });

    it('when no clock is injected, then the lock runs on the Redis clock and lifts after its delay', async () => {
      const backoff = createLoginBackoff({ client: clientA, prefix }, { freeFailures: 1, baseDelaySec: 1, maxDelaySec: 4 });
      await backoff.reserve('peggy@example.com');
      await backoff.recordFailure('peggy@example.com');
      expect(await backoff.reserve('peggy@example.com')).toMatchObject({ allowed: false, retryAfterSec: 1, failures: 1 });
      await sleep(1_050);
      expect((await backoff.reserve('peggy@example.com')).allowed).toBe(true);
    });

    it('when keys are written, then they sit under the prefix, expire, and hold no long or clear-text identifiers', async () => {
      const limiter = createRedisRateLimiter(clientA, prefix);
      const backoff = createLoginBackoff({ client: clientA, prefix });
      const longKey = `acct:${'a'.repeat(300)}@example.com`;
      await limiter.consume('login', '192.0.2.1', { points: 5, durationSec: 60 });
      await limiter.consume('login', longKey, { points: 5, durationSec: 60 });
      await backoff.reserve('victor@example.com');
      const keys = await keysUnderPrefix();
      expect(keys).toHaveLength(3);
      expect(keys).toContain(`${prefix}rl:login:192.0.2.1`);
      expect(keys.every((k) => k.length <= prefix.length + 80)).toBe(true);
      expect(keys.some((k) => k.includes('victor'))).toBe(false);
      for (const k of keys) {
        const ttl = await clientA.pTTL(k);
        expect(ttl).toBeGreaterThan(0);
      }
      expect(await clientA.pTTL(`${prefix}rl:login:192.0.2.1`)).toBeLessThanOrEqual(60_000);
    });
  });
