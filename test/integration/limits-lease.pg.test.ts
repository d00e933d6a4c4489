import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/cache/redis-client.js';
import { RedisHealth } from '../../src/cache/redis-health.js';
import { createLogger } from '../../src/log/logger.js';
import { createFallbackRateLimiter, createRedisRateLimiter, type LimitResult, type RedisClient } from '../../src/limits/rate-limiter.js';
import { MAX_LEASE } from '../../src/limits/redis-limiter.js';
import { TEST_REDIS_URL } from '../helpers/backend.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis-server.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

/*
 * Leases on the Redis limiter (docs/rate-limits.md, "Leases"): a busy key's hits are taken from the
 * shared window in blocks and spent in process. Two clients stand for two instances on one Redis
 * prefix. What must hold: together they never admit more than the budget; one instance alone refuses
 * exactly at the edge and reports exact headers; windows roll over; refund and reset stay right;
 * and Redis going away mid-lease is the fallback of today.
 */

const REDIS_URL = TEST_REDIS_URL!;
let clientA: RedisClient;
let clientB: RedisClient;
let prefix = '';

beforeAll(async () => {
  clientA = createClient({ url: REDIS_URL });
  clientB = createClient({ url: REDIS_URL });
  await Promise.all([clientA.connect(), clientB.connect()]);
});
afterAll(async () => {
  await Promise.all([clientA?.quit(), clientB?.quit()]);
});
beforeEach(() => {
  prefix = `gh-test-lease:${randomUUID()}:`;
});
afterEach(async () => {
  for await (const keys of clientA.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length) await clientA.del(keys);
});

/** An instance: its limiter and the round trips it made. */
function instance(client: RedisClient) {
  const stats = { calls: 0 };
  return { limiter: createRedisRateLimiter(client, prefix, { stats }), stats };
}

const countIn = async (bucket: string, key: string) => Number(await clientA.hGet(`${prefix}rl:${bucket}:${key}`, 'c'));

async function inSequence(n: number, fn: () => Promise<LimitResult>): Promise<LimitResult[]> {
  const out: LimitResult[] = [];
  for (let i = 0; i < n; i++) out.push(await fn());
  return out;
}

const allowed = (rs: LimitResult[]) => rs.filter((r) => r.allowed).length;

describe('two instances leasing one key', () => {
  it('when both consume far past the budget, in parallel waves, then together they admit exactly the budget, with few round trips', async () => {
    const a = instance(clientA);
    const b = instance(clientB);
    const rule = { points: 2000, durationSec: 60 };
    const results: LimitResult[] = [];
    for (let wave = 0; wave < 60; wave++) {
      // Uneven waves, both instances in each: one instance often holds a lease while the other asks Redis.
      const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => ((i * 7 + wave) % 3 ? a : b).limiter.consume('bridge', 'secret:x', rule)));
      results.push(...rs);
      expect(await countIn('bridge', 'secret:x')).toBeLessThanOrEqual(rule.points + 1);
    }
    expect(results).toHaveLength(3000);
    expect(allowed(results)).toBe(2000);
    expect(results.filter((r) => !r.allowed).every((r) => r.remaining === 0 && r.retryAfterSec >= 1)).toBe(true);
    expect(new Set(results.map((r) => r.resetAt)).size).toBe(1);
    // Without leases: 3000 round trips. With them, the waves' first calls and the refusals near the edge.
    expect(a.stats.calls + b.stats.calls).toBeLessThan(1000);
  });

  it('when one instance stops while it holds a lease, then the other is refused early by at most that lease, and never admits beyond the budget', async () => {
    const a = instance(clientA);
    const b = instance(clientB);
    const rule = { points: 1000, durationSec: 60 };
    const fromA = await inSequence(400, () => a.limiter.consume('session', 'session:s1', rule));
    expect(allowed(fromA)).toBe(400);
    const fromB = await inSequence(700, () => b.limiter.consume('session', 'session:s1', rule));
    const held = 1000 - 400 - allowed(fromB);
    expect(held).toBeGreaterThanOrEqual(0);
    expect(held).toBeLessThanOrEqual(MAX_LEASE);
    // A spends what it holds, then is refused like B: together exactly the budget.
    const fromAAgain = await inSequence(100, () => a.limiter.consume('session', 'session:s1', rule));
    expect(allowed(fromAAgain)).toBe(held);
    expect(400 + allowed(fromB) + allowed(fromAAgain)).toBe(1000);
  });

  it('when many consumes on a fresh key arrive at once, then one round trip carries the first and one the rest (no stampede)', async () => {
    const a = instance(clientA);
    const rs = await Promise.all(Array.from({ length: 100 }, () => a.limiter.consume('bridge', 'secret:y', { points: 100_000, durationSec: 60 })));
    expect(allowed(rs)).toBe(100);
    expect(a.stats.calls).toBe(2);
    expect(rs.map((r) => r.remaining).sort((x, y) => y - x)).toEqual(Array.from({ length: 100 }, (_, i) => 100_000 - 1 - i));
  });
});

describe('one instance with leases', () => {
  it('when it consumes in sequence past the budget, then it refuses exactly at the edge and remaining is the budget less the hits so far', async () => {
    const a = instance(clientA);
    const rule = { points: 300, durationSec: 60 };
    const rs = await inSequence(320, () => a.limiter.consume('default', '192.0.2.7', rule));
    expect(rs.map((r) => r.allowed)).toEqual([...Array(300).fill(true), ...Array(20).fill(false)]);
    expect(rs.map((r) => r.remaining)).toEqual([...Array.from({ length: 300 }, (_, i) => 299 - i), ...Array(20).fill(0)]);
    expect(new Set(rs.map((r) => r.resetAt)).size).toBe(1);
    expect(rs[300].retryAfterSec).toBeGreaterThanOrEqual(59);
    // Refusals count up to the budget + 1, as without leases.
    expect(await countIn('default', '192.0.2.7')).toBe(301);
    // Leases cut the round trips (a ramp 1, 2, 4 … up to MAX_LEASE), and near the edge every hit was its own.
    expect(a.stats.calls).toBeLessThan(120);
  });

  it('when it consumes in parallel past the budget, then exactly the budget is admitted with every remaining from budget − 1 to 0 once', async () => {
    const a = instance(clientA);
    const rule = { points: 200, durationSec: 60 };
    await inSequence(20, () => a.limiter.consume('session', 'session:p', rule));
    const rs = await Promise.all(Array.from({ length: 300 }, () => a.limiter.consume('session', 'session:p', rule)));
    expect(allowed(rs)).toBe(180);
    expect(
      rs
        .filter((r) => r.allowed)
        .map((r) => r.remaining)
        .sort((x, y) => x - y),
    ).toEqual(Array.from({ length: 180 }, (_, i) => i));
  });

  it('when a key is seen once, then nothing is leased: the window holds that one hit', async () => {
    const a = instance(clientA);
    await a.limiter.consume('default', '198.51.100.1', { points: 300, durationSec: 60 });
    expect(await countIn('default', '198.51.100.1')).toBe(1);
  });

  it('when the window ends while a lease is held, then the new window starts from its first hit and the old lease is not spent in it', async () => {
    const a = instance(clientA);
    const rule = { points: 1000, durationSec: 1 };
    const old = await inSequence(100, () => a.limiter.consume('session', 'session:w', rule));
    expect(old.at(-1)!.remaining).toBe(900);
    expect((await countIn('session', 'session:w')) - 100).toBeGreaterThan(0); // a lease is held
    await sleep(Math.max(0, old[0].resetAt * 1000 - Date.now()) + 30);
    const calls = a.stats.calls;
    const fresh = await a.limiter.consume('session', 'session:w', rule);
    expect(fresh).toMatchObject({ allowed: true, remaining: 999 });
    expect(fresh.resetAt).toBeGreaterThan(old[0].resetAt);
    expect(a.stats.calls).toBe(calls + 1);
    expect(await countIn('session', 'session:w')).toBe(1);
  });

  it('when a hit is refunded while a lease is held, then Redis gives it back and the next answer shows it', async () => {
    const a = instance(clientA);
    const rule = { points: 1000, durationSec: 60 };
    await inSequence(40, () => a.limiter.consume('session', 'session:r', rule));
    const before = await countIn('session', 'session:r');
    await a.limiter.refund('session', 'session:r');
    expect(await countIn('session', 'session:r')).toBe(before - 1);
    expect((await a.limiter.consume('session', 'session:r', rule)).remaining).toBe(1000 - 40);
    expect((await a.limiter.consume('session', 'session:r', rule)).remaining).toBe(1000 - 41);
  });

  it('when a hit is refunded near the edge (no lease), then exactly one more is admitted', async () => {
    const a = instance(clientA);
    const rule = { points: 10, durationSec: 60 };
    await inSequence(10, () => a.limiter.consume('login', '203.0.113.1', rule));
    await a.limiter.refund('login', '203.0.113.1');
    const rs = await inSequence(3, () => a.limiter.consume('login', '203.0.113.1', rule));
    expect(rs.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
  });

  it('when the key is reset while a lease is held, then the full budget is back and the lease is gone', async () => {
    const a = instance(clientA);
    const rule = { points: 1000, durationSec: 60 };
    await inSequence(100, () => a.limiter.consume('session', 'session:x', rule));
    await a.limiter.reset('session', 'session:x');
    const r = await a.limiter.consume('session', 'session:x', rule);
    expect(r.remaining).toBe(999);
    expect(await countIn('session', 'session:x')).toBe(1);
  });

  it('when leases are off (maxLease 0), then every hit is a round trip', async () => {
    const stats = { calls: 0 };
    const limiter = createRedisRateLimiter(clientA, prefix, { maxLease: 0, stats });
    await inSequence(50, () => limiter.consume('session', 'session:n', { points: 1000, durationSec: 60 }));
    expect(stats.calls).toBe(50);
    expect(await countIn('session', 'session:n')).toBe(50);
  });
});

describe('Redis going away mid-lease', () => {
  let redis: OwnRedis;
  let client: RedisClient;
  let health: RedisHealth;
  const logger = createLogger('silent');
  const rule = { points: 1000, durationSec: 300 };

  beforeAll(async () => {
    redis = await startOwnRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });
  beforeEach(async () => {
    client = await connectRedis(redis.url, logger, { commandTimeoutMs: 300 });
    health = new RedisHealth(client, logger, 300);
  });
  afterEach(async () => {
    health.stop();
    client.destroy();
  });

  const ready = () => expect.poll(() => client.isReady && health.available(), { timeout: 10_000 }).toBe(true);

  it('when Redis dies while a lease is held and comes back empty, then the in-process budget counts meanwhile and the old lease is never spent', async () => {
    const stats = { calls: 0 };
    const limiter = createFallbackRateLimiter(createRedisRateLimiter(client, prefix, { stats }), health);
    const before = await inSequence(200, () => limiter.consume('session', 'session:k', rule));
    expect(allowed(before)).toBe(200);
    expect(stats.calls).toBeLessThan(30);
    await redis.kill();
    await expect.poll(() => health.available()).toBe(false);
    const during = await inSequence(20, () => limiter.consume('session', 'session:k', rule));
    // Today's fallback: half the budget, counted in process from the first hit.
    expect(during.map((r) => [r.allowed, r.limit])).toEqual(Array(20).fill([true, 500]));
    expect(during.map((r) => r.remaining)).toEqual(Array.from({ length: 20 }, (_, i) => 499 - i));
    await redis.start();
    await ready();
    // A fresh Redis: a fresh window, not what was leased from the old one.
    const after = await limiter.consume('session', 'session:k', rule);
    expect(after).toMatchObject({ allowed: true, limit: 1000, remaining: 999 });
  });

  it('when a lease is held, then consumeNow spends from it at once, counted like consume; with none held, or Redis down, it is null and counts nothing', async () => {
    const stats = { calls: 0 };
    const limiter = createFallbackRateLimiter(createRedisRateLimiter(client, prefix, { stats }), health);
    expect(limiter.consumeNow!('session', 'session:now', rule)).toBeNull();
    await inSequence(40, () => limiter.consume('session', 'session:now', rule));
    const calls = stats.calls;
    const now = limiter.consumeNow!('session', 'session:now', rule);
    expect(now).toMatchObject({ allowed: true, limit: 1000, remaining: 1000 - 41 });
    expect(stats.calls).toBe(calls);
    expect(await limiter.consume('session', 'session:now', rule)).toMatchObject({ remaining: 1000 - 42 });
    await redis.kill();
    await expect.poll(() => health.available()).toBe(false);
    expect(limiter.consumeNow!('session', 'session:now', rule)).toBeNull();
    // The fallback's budget starts at its first hit: the null above counted nothing.
    expect(await limiter.consume('session', 'session:now', rule)).toMatchObject({ allowed: true, limit: 500, remaining: 499 });
    await redis.start();
    await ready();
  });

  it('when Redis stalls with a lease call out, then every caller is answered by the fallback within the timeout, and the shared budget resumes after', async () => {
    const limiter = createFallbackRateLimiter(createRedisRateLimiter(client, prefix), health);
    await inSequence(50, () => limiter.consume('bridge', 'secret:z', rule));
    redis.pause();
    try {
      const started = Date.now();
      // Enough to spend any lease held, so some wait on a lease call to the stalled server.
      const rs = await Promise.all(Array.from({ length: 200 }, () => limiter.consume('bridge', 'secret:z', rule)));
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(rs.every((r) => r.allowed)).toBe(true);
      expect(rs.some((r) => r.limit === 500)).toBe(true);
    } finally {
      redis.resume();
    }
    await ready();
    const r = await limiter.consume('bridge', 'secret:z', rule);
    expect(r.limit).toBe(1000);
    expect(r.remaining).toBeLessThan(1000 - 50);
  });

  it('when the connection drops with a lease call out on a limiter without fallback, then the callers waiting on it fail (to fail open upstream) instead of hanging', async () => {
    // A relay in front of the server: the connection can be cut while the server holds the call unanswered.
    const proxy = await startTcpProxy(redis.port);
    const viaProxy = await connectRedis(`redis://127.0.0.1:${proxy.port}`, logger, { commandTimeoutMs: 300 });
    try {
      const limiter = createRedisRateLimiter(viaProxy, prefix);
      await inSequence(30, () => limiter.consume('bridge', 'secret:d', rule));
      await sleep(50); // a refill asked for on the way has come back
      const held = Number(await viaProxy.hGet(`${prefix}rl:bridge:secret:d`, 'c')) - 30;
      redis.pause();
      const pending = Array.from({ length: 100 }, () =>
        limiter.consume('bridge', 'secret:d', rule).then(
          () => 'ok',
          () => 'failed',
        ),
      );
      await sleep(50);
      await proxy.cut();
      const started = Date.now();
      const outcomes = await Promise.all(pending);
      expect(Date.now() - started).toBeLessThan(3_000);
      // What the lease held was admitted at once; the rest waited on the call to the stalled server.
      expect(held).toBeGreaterThan(0);
      expect(outcomes.filter((o) => o === 'ok')).toHaveLength(held);
      expect(outcomes.filter((o) => o === 'failed')).toHaveLength(100 - held);
    } finally {
      redis.resume();
      viaProxy.destroy();
      await proxy.close();
    }
  });
});
