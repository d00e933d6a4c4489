import { ExpiringMap } from './expiring-map.js';
import { assertRule, counterKey, toResult } from './limit-keys.js';
import type { LimitResult, LimitRule, RateLimiter } from './limit-types.js';

interface Window {
  count: number;
  /** The budget the window was opened with: a refund takes a refused window back from it. */
  points: number;
  resetMs: number;
  expiresAtMs: number;
}

export interface MemoryRateLimiterOptions {
  /** Clock in milliseconds since the epoch (tests inject one). */
  now?: () => number;
  /** Most (bucket, key) windows kept at once; the oldest are evicted beyond it. */
  maxKeys?: number;
}

const DEFAULT_MAX_KEYS = 100_000;

/**
 * In-process fixed windows for a single instance. consume() does all its work before returning
 * its promise, with no await in between, so parallel calls cannot interleave.
 */
export function createMemoryRateLimiter(opts: MemoryRateLimiterOptions = {}): RateLimiter {
  const now = opts.now ?? Date.now;
  const windows = new ExpiringMap<Window>(opts.maxKeys ?? DEFAULT_MAX_KEYS);

  function consumeNow(bucket: string, key: string, rule: LimitRule): LimitResult {
    assertRule(rule);
    const id = counterKey('', bucket, key);
    const t = now();
    let w = windows.get(id, t);
    if (!w) {
      const resetMs = t + Math.round(rule.durationSec * 1000);
      w = { count: 0, points: rule.points, resetMs, expiresAtMs: resetMs };
      windows.set(id, w, t);
    }
    // Refused hits stop counting at points + 1: the answer is the same and the number cannot grow without bound.
    if (w.count <= rule.points) w.count += 1;
    return toResult(w.count, w.resetMs, t, rule);
  }

  return {
    consumeNow,
    async consume(bucket: string, key: string, rule: LimitRule): Promise<LimitResult> {
      return consumeNow(bucket, key, rule);
    },
    async reset(bucket: string, key: string): Promise<void> {
      windows.delete(counterKey('', bucket, key));
    },
    async refund(bucket: string, key: string, windowResetAt?: number): Promise<void> {
      // Synchronous like consume: parallel refunds and hits cannot interleave.
      const w = windows.get(counterKey('', bucket, key), now());
      if (!w || (windowResetAt !== undefined && Math.ceil(w.resetMs / 1000) !== windowResetAt)) return;
      // points + 1 marks refused hits (admitted ones are at most points): the hit given back is an admitted one.
      const admitted = Math.min(w.count, w.points);
      if (admitted > 0) w.count = admitted - 1;
    },
    async close(): Promise<void> {
      windows.clear();
    },
  };
}
