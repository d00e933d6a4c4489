import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { AppContext } from '../../app-context.js';
import type { Config } from '../../config/schema.js';
import { AppError } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import type { LimitResult, LimitRule } from '../../limits/rate-limiter.js';
import { clientIp, ipLimitKey, ipNetworkKey } from './client-ip.js';

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

export function ruleFor(cls: RateLimitClass, config: Config): LimitRule {
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

export const RATE_LIMITED_MESSAGE = 'Too many requests';

/** Buckets this request has already been counted in, so no layer counts it twice. */
const COUNTED = Symbol('rateLimitCounted');
type Counted = Request & { [COUNTED]?: Set<string> };

export function countedIn(req: Request, bucket: string): boolean {
  return (req as Counted)[COUNTED]?.has(bucket) ?? false;
}

export function wasCounted(req: Request): boolean {
  return ((req as Counted)[COUNTED]?.size ?? 0) > 0;
}

function markCounted(req: Request, bucket: string): void {
  const r = req as Counted;
  (r[COUNTED] ??= new Set()).add(bucket);
}

const WARN_EVERY_MS = 30_000;
const lastWarnByApp = new WeakMap<AppContext, number>();

/**
 * One hit on (bucket, key). When the store fails (Redis down) the request is let through and a
 * warning logged at most every 30 s: an outage of the limiter should not become an outage of login.
 */
export async function consumeLimit(app: AppContext, bucket: string, key: string, rule: LimitRule): Promise<LimitResult> {
  try {
    return await app.limiter.consume(bucket, key, rule);
  } catch (err) {
    const now = Date.now();
    if (now - (lastWarnByApp.get(app) ?? 0) >= WARN_EVERY_MS) {
      lastWarnByApp.set(app, now);
      app.logger.warn({ err: (err as Error)?.message, bucket }, 'rate limiter unavailable; failing open');
    }
    return { allowed: true, limit: rule.points, remaining: rule.points, resetAt: Math.ceil(now / 1000 + rule.durationSec), retryAfterSec: 0 };
  }
}

/** X-RateLimit-* of the bucket closest to refusing; a later, tighter bucket replaces an earlier one. */
export function setLimitHeaders(res: Response, r: LimitResult): void {
  const prev = res.getHeader('X-RateLimit-Remaining');
  if (prev !== undefined && r.allowed && Number(prev) < r.remaining) return;
  res.setHeader('X-RateLimit-Limit', String(r.limit));
  res.setHeader('X-RateLimit-Remaining', String(r.remaining));
  res.setHeader('X-RateLimit-Reset', String(r.resetAt));
  if (!r.allowed) res.setHeader('Retry-After', String(Math.max(1, r.retryAfterSec)));
}

export function tooManyRequests(r: LimitResult): AppError {
  return new AppError(429, Codes.RATE_LIMITED, RATE_LIMITED_MESSAGE, undefined, { retry_after: Math.max(1, r.retryAfterSec) });
}

export function sendTooMany(res: Response, r: LimitResult): void {
  res.status(429).json({ success: false, error: RATE_LIMITED_MESSAGE, code: Codes.RATE_LIMITED, retry_after: Math.max(1, r.retryAfterSec) });
}

/**
 * Counts the request once against its class for the client's address (IPv6 by /64) and sets the
 * headers. Returns the result; the caller refuses when `allowed` is false.
 */
export async function limitRequest(app: AppContext, req: Request, res: Response, cls: RateLimitClass): Promise<LimitResult | null> {
  if (!app.config.rateLimitsEnabled || countedIn(req, cls)) return null;
  markCounted(req, cls);
  const r = await consumeLimit(app, cls, ipLimitKey(clientIp(req)), ruleFor(cls, app.config));
  setLimitHeaders(res, r);
  return r;
}

/** Route-level limiter (defineRoute): a no-op when the early gate already counted this class. */
export function rateLimitFor(cls: RateLimitClass | undefined, app: AppContext): RequestHandler {
  const bucket = cls ?? 'default';
  return (req, res, next) => {
    // Usually the gate has counted the request already: then nothing to wait for.
    if (!app.config.rateLimitsEnabled || countedIn(req, bucket)) return next();
    limitRequest(app, req, res, bucket).then((r) => (r && !r.allowed ? sendTooMany(res, r) : next()), next);
  };
}

/*
 * Login, per account. The route's `login` class already limits each client address. On top of it:
 * - `login-account`: the Login figures per (account, source network: IPv4 /24, IPv6 /48), so one
 *   source gets the same few guesses at an account however many addresses it rotates through
 *   inside its network;
 * - `login-account-all`: a larger budget per account from all sources together
 *   (RATE_LIMIT_LOGIN_ACCOUNT, default 10 x Login), so a botnet cannot spray one account.
 * A source refused by its own share is not counted in the shared budget, so no single source can
 * exhaust it and lock the owner out from everywhere; that takes ten networks' worth of attempts.
 */

/** The shared per-account budget: RATE_LIMIT_LOGIN_ACCOUNT, or ten times the Login attempts over the Login window. */
export function accountLimitRule(config: Config): LimitRule {
  return config.rateLimitLoginAccount ?? { points: config.rateLimitLogin.points * 10, durationSec: config.rateLimitLogin.durationSec };
}

/** Identifiers compare case-insensitively; stored keys are hashed so addresses never sit in Redis in clear. */
function accountId(identifier: string): string {
  const norm = identifier.normalize('NFKC').trim().toLowerCase();
  return norm ? createHash('sha256').update(norm).digest('base64url') : '';
}

/**
 * The key to pass to app.loginBackoff (reserve / recordFailure / recordSuccess): the account and the
 * caller's network, so failures from one place slow that place down without locking the owner out
 * everywhere. The shared per-account budget of consumeAccountLimit covers attempts from many places.
 */
export function loginAttemptKey(req: Request, identifier: string): string {
  return `${accountId(identifier)}|${ipNetworkKey(clientIp(req))}`;
}

/**
 * Counts one login attempt on `identifier` (e-mail or user name, any case) for the caller of `res`.
 * Throws AppError 429 RATE_LIMITED (Retry-After and X-RateLimit-* set) when either the caller's
 * share or the account's shared budget is spent. Call it after validating the body, before
 * checking the password.
 */
export async function consumeAccountLimit(app: AppContext, res: Response, identifier: string): Promise<void> {
  const account = accountId(identifier);
  if (!app.config.rateLimitsEnabled || !account) return;
  const net = ipNetworkKey(clientIp(res.req));
  const own = await consumeLimit(app, 'login-account', `${account}|${net}`, app.config.rateLimitLogin);
  setLimitHeaders(res, own);
  if (!own.allowed) throw tooManyRequests(own);
  const all = await consumeLimit(app, 'login-account-all', account, accountLimitRule(app.config));
  setLimitHeaders(res, all);
  if (!all.allowed) throw tooManyRequests(all);
}
