import type { RedisHealth } from '../cache/redis-health.js';
import { assertRule } from './limit-keys.js';
import { createMemoryRateLimiter } from './memory-limiter.js';
import type { LeasingRateLimiter, LimitRule, RateLimiter } from './limit-types.js';

/**
 * Share of each budget an instance grants on its own while Redis is down. Every instance then counts
 * alone, so N instances could together admit N times the budget; half keeps a pair of instances at
 * the configured figure and still lets a real user through.
 */
export const FALLBACK_SHARE = 0.5;

export const fallbackRule = (rule: LimitRule): LimitRule => ({
  points: Math.max(1, Math.floor(rule.points * FALLBACK_SHARE)),
  durationSec: rule.durationSec,
});

/**
 * The shared Redis limiter, with an in-process limiter at a conservative budget while Redis is
 * unreachable: never a wait on Redis, never a request let through uncounted. A hit the shared
 * limiter already leased from Redis is spent at once while Redis is up; during an outage only the
 * in-process budget counts, and leases taken before it are dropped (a restarted Redis has lost them).
 */
export function createFallbackRateLimiter(shared: RateLimiter | LeasingRateLimiter, health: RedisHealth): RateLimiter {
  const local = createMemoryRateLimiter();
  const leasing = 'spendLeased' in shared ? shared : null;
  if (leasing) health.on('down', () => leasing.forget());
  const spendNow = (bucket: string, key: string, rule: LimitRule) => {
    // A bad rule is a programming error, not an outage: let it throw.
    assertRule(rule);
    return leasing && health.available() ? leasing.spendLeased(bucket, key, rule) : null;
  };
  return {
    consumeNow: spendNow,
    consume(bucket, key, rule) {
      const leased = spendNow(bucket, key, rule);
      if (leased) return Promise.resolve(leased);
      return health.run(
        'rate limit',
        () => shared.consume(bucket, key, rule),
        () => local.consume(bucket, key, fallbackRule(rule)),
      );
    },
    async reset(bucket, key) {
      await local.reset(bucket, key);
      await health.run(
        'rate limit reset',
        () => shared.reset(bucket, key),
        () => undefined,
      );
    },
    async refund(bucket, key, windowResetAt) {
      await local.refund(bucket, key, windowResetAt);
      await health.run(
        'rate limit refund',
        () => shared.refund(bucket, key, windowResetAt),
        () => undefined,
      );
    },
    close: () => local.close(),
  };
}
