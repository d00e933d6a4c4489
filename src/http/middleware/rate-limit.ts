import type { RequestHandler } from 'express';
import type { AppContext } from '../../app-context.js';
import type { Config } from '../../config/schema.js';
import { Codes } from '../../errors/codes.js';

/** The spec's limit classes; every route has one (explicit, or `default`). */
export type RateLimitClass =
  | 'login'
  | 'registration'
  | 'token-login'
  | 'token-validate'
  | 'social-login'
  | 'social-api'
  | 'cache-invalidation'
  | 'admin'
  | 'default';

export function ruleFor(cls: RateLimitClass, config: Config): { points: number; durationSec: number } {
  switch (cls) {
    case 'login': return config.rateLimitLogin;
    case 'registration': return config.rateLimitRegistration;
    case 'token-login': return config.rateLimitTokenLogin;
    case 'token-validate': return config.rateLimitTokenValidate;
    case 'social-login': return config.rateLimitSocialLogin;
    case 'social-api': return config.rateLimitSocialApi;
    case 'cache-invalidation': return config.rateLimitCacheInvalidation;
    case 'admin': return config.rateLimitAdmin;
    default: return config.rateLimitDefault;
  }
}

/** Counts the request against its class for the client IP and sets X-RateLimit-* on every answer. */
export function rateLimitFor(cls: RateLimitClass | undefined, app: AppContext): RequestHandler {
  const bucket = cls ?? 'default';
  return async (req, res, next) => {
    if (!app.config.rateLimitsEnabled) return next();
    const rule = ruleFor(bucket, app.config);
    const key = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const r = await app.limiter.consume(bucket, key, rule);
    res.setHeader('X-RateLimit-Limit', String(r.limit));
    res.setHeader('X-RateLimit-Remaining', String(r.remaining));
    res.setHeader('X-RateLimit-Reset', String(r.resetAt));
    if (!r.allowed) {
      res.setHeader('Retry-After', String(Math.max(1, r.retryAfterSec)));
      res.status(429).json({ success: false, error: 'Too many requests', code: Codes.RATE_LIMITED, retry_after: r.retryAfterSec });
      return;
    }
    next();
  };
}
