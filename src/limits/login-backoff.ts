import { createMemoryBackoff } from './backoff-memory.js';
import { createRedisBackoff } from './backoff-redis.js';
import type { BackoffSettings } from './backoff-rules.js';
import type { LoginBackoff, RedisClient } from './limit-types.js';
import type { RedisHealth } from '../cache/redis-health.js';

export type { BackoffDecision, LoginBackoff } from './limit-types.js';

export interface LoginBackoffOptions {
  /** Failures allowed before the first lock. Default 5. */
  freeFailures?: number;
  /** Lock after the freeFailures-th failure; doubles with each further failure. Default 30 s. */
  baseDelaySec?: number;
  /** Cap on the lock. Default 15 min. */
  maxDelaySec?: number;
  /** Clock in ms since the epoch. Default: Date.now in memory, the Redis server's clock on Redis. */
  now?: () => number;
}

const RESERVATION_TTL_MS = 15_000;
const FORGET_AFTER_MS = 24 * 3600_000;

export function createLoginBackoff(
  store: 'memory' | { client: RedisClient; prefix: string; health?: RedisHealth },
  opts: LoginBackoffOptions = {},
): LoginBackoff {
  const settings = toSettings(opts);
  if (store === 'memory') return createMemoryBackoff(settings);
  const shared = createRedisBackoff(store.client, store.prefix, settings);
  return store.health ? withFallback(shared, createMemoryBackoff(settings), store.health) : shared;
}

/**
 * While Redis is down each instance keeps the backoff in process (same rules, counted from zero):
 * logins stay throttled rather than refused or let through unthrottled.
 */
function withFallback(shared: LoginBackoff, local: LoginBackoff, health: RedisHealth): LoginBackoff {
  const what = 'login backoff';
  return {
    reserve: (a) =>
      health.run(
        what,
        () => shared.reserve(a),
        () => local.reserve(a),
      ),
    recordFailure: (a) =>
      health.run(
        what,
        () => shared.recordFailure(a),
        () => local.recordFailure(a),
      ),
    recordSuccess: (a) =>
      health.run(
        what,
        () => shared.recordSuccess(a),
        () => local.recordSuccess(a),
      ),
    release: (a) =>
      health.run(
        what,
        () => shared.release(a),
        () => local.release(a),
      ),
  };
}
function toSettings(opts: LoginBackoffOptions): BackoffSettings {
  const freeFailures = opts.freeFailures ?? 5;
  const baseDelaySec = opts.baseDelaySec ?? 30;
  const maxDelaySec = opts.maxDelaySec ?? 900;
  if (!Number.isInteger(freeFailures) || freeFailures < 1) throw new TypeError(`freeFailures must be a positive integer, got ${freeFailures}`);
  if (!(baseDelaySec > 0) || !(maxDelaySec >= baseDelaySec) || !Number.isFinite(maxDelaySec)) {
    throw new TypeError(`need 0 < baseDelaySec <= maxDelaySec, got ${baseDelaySec} and ${maxDelaySec}`);
  }
  const maxDelayMs = Math.round(maxDelaySec * 1000);
  return {
    freeFailures,
    baseDelayMs: Math.round(baseDelaySec * 1000),
    maxDelayMs,
    reservationTtlMs: RESERVATION_TTL_MS,
    forgetAfterMs: Math.max(FORGET_AFTER_MS, 2 * maxDelayMs),
    now: opts.now,
  };
}
