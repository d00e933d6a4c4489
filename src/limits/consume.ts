import { AppError } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import type { Logger } from '../log/logger.js';
import type { LimitResult, LimitRule, RateLimiter } from './limit-types.js';

export const RATE_LIMITED_MESSAGE = 'Too many requests';

const WARN_EVERY_MS = 30_000;
const lastWarnByLimiter = new WeakMap<object, number>();

/**
 * One hit on (bucket, key). When the store fails (Redis down) the request is let through and a
 * warning logged at most every 30 s: an outage of the limiter should not become an outage of login.
 * Core routes (http/middleware/rate-limit.ts) and module contexts count through it alike.
 */
export async function consumeLimit(
  app: { limiter: Pick<RateLimiter, 'consume'>; logger: Logger },
  bucket: string,
  key: string,
  rule: LimitRule,
): Promise<LimitResult> {
  try {
    return await app.limiter.consume(bucket, key, rule);
  } catch (err) {
    const now = Date.now();
    if (now - (lastWarnByLimiter.get(app.limiter) ?? 0) >= WARN_EVERY_MS) {
      lastWarnByLimiter.set(app.limiter, now);
      app.logger.warn({ err: (err as Error)?.message, bucket }, 'rate limiter unavailable; failing open');
    }
    return { allowed: true, limit: rule.points, remaining: rule.points, resetAt: Math.ceil(now / 1000 + rule.durationSec), retryAfterSec: 0 };
  }
}

/** The 429 answer for a refused hit, with the seconds until the budget returns. */
export function tooManyRequests(r: LimitResult): AppError {
  return new AppError(429, Codes.RATE_LIMITED, RATE_LIMITED_MESSAGE, undefined, { retry_after: Math.max(1, r.retryAfterSec) });
}
