/** The limiters' shared types: a leaf, so the backends and the files that pick one import it without a circle. */
import type { createClient } from 'redis';

/** The app's one shared node-redis v5 client, created and connected by the caller. */
export type RedisClient = ReturnType<typeof createClient>;

/** Same shape as config.rateLimitLogin and friends. */
export interface LimitRule {
  points: number;
  durationSec: number;
}

export interface LimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the current window ends and the budget returns. */
  resetAt: number;
  /** 0 when allowed. */
  retryAfterSec: number;
}

/**
 * A fixed window per (bucket, key), opened by the key's first hit.
 * bucket is the limit class (e.g. 'login'); key is an IP or 'acct:<email>'.
 */
export interface RateLimiter {
  consume(bucket: string, key: string, rule: LimitRule): Promise<LimitResult>;
  /**
   * The same hit when it can be counted without waiting (in process, or from a lease held), else
   * null and nothing counted (then consume). Lets a hot path answer in the tick the request came in.
   */
  consumeNow?(bucket: string, key: string, rule: LimitRule): LimitResult | null;
  reset(bucket: string, key: string): Promise<void>;
  /**
   * Gives back one hit (a request that failed through no fault of the caller's, or a password check
   * that passed). `windowResetAt` is the `resetAt` of the result that counted the hit: when given, the
   * hit goes back only while that window is still the key's current one (a hit of a window that has
   * ended is not taken from the next). Never below zero; a window whose count reached the refusal mark
   * (points + 1) goes back from the budget, so a refused hit is never what is given back.
   */
  refund(bucket: string, key: string, windowResetAt?: number): Promise<void>;
  close(): Promise<void>;
}

/** The Redis store: hits may be leased from the shared window and spent in process (redis-limiter.ts). */
export interface LeasingRateLimiter extends RateLimiter {
  /** A hit from a lease this instance holds on the key, without waiting; null when it holds none (then consume). */
  spendLeased(bucket: string, key: string, rule: LimitRule): LimitResult | null;
  /** Drops every lease held: the store went away, and what it granted may have gone with it. */
  forget(): void;
}

export interface BackoffDecision {
  allowed: boolean;
  retryAfterSec: number;
  /** Consecutive failures recorded for the account so far. */
  failures: number;
}

/**
 * Per-account failed-login backoff. Call reserve() before checking the password and, when it is
 * allowed, exactly one of recordFailure() / recordSuccess() after. The reservation holds one of the
 * account's remaining attempts while the check runs, so parallel attempts cannot all slip in
 * before the first failures are recorded.
 */
export interface LoginBackoff {
  reserve(account: string): Promise<BackoffDecision>;
  recordFailure(account: string): Promise<void>;
  recordSuccess(account: string): Promise<void>;
  /** Gives a reservation back unused: the attempt ended before the password was checked (database down). */
  release(account: string): Promise<void>;
}
