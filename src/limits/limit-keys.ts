import { createHash } from 'node:crypto';
import type { LimitResult, LimitRule } from './limit-types.js';

/**
 * A bucket is core's (no ':', and not `module`) or a module class `module:<id>:<name>` (neither part
 * holding a ':'; limit-classes.ts): either way the bucket's end in a counter key is known.
 */
const BUCKET_RE = /^(?:(?!module$)[A-Za-z0-9_.-]{1,64}|module:[a-z0-9-]{1,64}:[a-z0-9-]{1,64})$/;
const MAX_KEY_CHARS = 64;

/** Long keys are hashed so attacker-chosen input cannot make Redis keys or map entries large. */
export function shortKey(key: string): string {
  return key.length <= MAX_KEY_CHARS ? key : createHash('sha256').update(key).digest('hex');
}

/** Bucket names that passed BUCKET_RE: a handful (the limit classes), checked on every counted request. */
const validBuckets = new Set<string>();

/** Storage key of a bucket's counter; BUCKET_RE keeps two (bucket, key) pairs from sharing one. */
export function counterKey(prefix: string, bucket: string, key: string): string {
  if (!validBuckets.has(bucket)) {
    if (!BUCKET_RE.test(bucket)) throw new TypeError(`invalid rate-limit bucket name: ${JSON.stringify(bucket)}`);
    if (validBuckets.size < 1024) validBuckets.add(bucket);
  }
  return `${prefix}rl:${bucket}:${shortKey(key)}`;
}

export function assertRule(rule: LimitRule): void {
  if (!Number.isInteger(rule.points) || rule.points < 1 || !(rule.durationSec > 0) || !Number.isFinite(rule.durationSec)) {
    throw new TypeError(`invalid rate-limit rule: ${JSON.stringify(rule)}`);
  }
}

/** One place turns a window's count and end time into the result every backend reports. */
export function toResult(count: number, resetMs: number, nowMs: number, rule: LimitRule): LimitResult {
  const allowed = count <= rule.points;
  return {
    allowed,
    limit: rule.points,
    remaining: Math.max(0, rule.points - count),
    // Rounded up: at resetAt the budget is certainly back.
    resetAt: Math.ceil(resetMs / 1000),
    retryAfterSec: allowed ? 0 : Math.max(1, Math.ceil((resetMs - nowMs) / 1000)),
  };
}
