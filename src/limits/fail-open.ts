import type { LimitResult, LimitRule, RateLimiter } from './rate-limiter.js';

/** One hit in one budget: the bucket (a limit class, or a budget of its own such as login-account) and the key. */
export interface Hit {
  bucket: string;
  key: string;
  /** The `resetAt` of the result that counted it: a refund goes back to that window only (absent: the current one). */
  resetAt?: number;
}

/** What counting needs: the limiter, and where to say that it failed. */
export interface CountingDeps {
  limiter: Pick<RateLimiter, 'consume' | 'refund'>;
  logger: { warn(obj: object, msg: string): void };
}

const WARN_EVERY_MS = 30_000;
const lastWarn = new WeakMap<object, number>();

/**
 * One hit on (bucket, key). When the store fails (Redis down) the hit is let through and a warning
 * logged at most every 30 s per limiter: an outage of the limiter should not become an outage of login.
 */
export async function consumeFailingOpen(deps: CountingDeps, bucket: string, key: string, rule: LimitRule): Promise<LimitResult> {
  try {
    return await deps.limiter.consume(bucket, key, rule);
  } catch (err) {
    const now = Date.now();
    if (now - (lastWarn.get(deps.limiter) ?? 0) >= WARN_EVERY_MS) {
      lastWarn.set(deps.limiter, now);
      deps.logger.warn({ err: (err as Error)?.message, bucket }, 'rate limiter unavailable; failing open');
    }
    return { allowed: true, limit: rule.points, remaining: rule.points, resetAt: Math.ceil(now / 1000 + rule.durationSec), retryAfterSec: 0 };
  }
}
