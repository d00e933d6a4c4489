import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { AppContext } from '../../app-context.js';
import type { Config } from '../../config/schema.js';
import { Codes } from '../../errors/codes.js';
import type { LimitResult, LimitRule } from '../../limits/rate-limiter.js';
import { clientIp, ipLimitKey, ipNetworkKey } from './client-ip.js';
import { readSessionToken } from '../request-context.js';
import type { LimitTarget, RateLimitClass, RateLimitClassifier as ClassifierFor } from '../route-shape.js';
import { consumeLimit, RATE_LIMITED_MESSAGE, tooManyRequests } from '../../limits/consume.js';

/** The spec's limit classes (every route has one, explicit or `default`), declared with the route shapes. */
export type { LimitTarget, RateLimitClass } from '../route-shape.js';
/** A classifier as this layer calls it: with the app context. */
export type RateLimitClassifier = ClassifierFor<AppContext>;
/** What a route declares: a class counted per client address, or a classifier. */
export type RouteLimit = RateLimitClass | RateLimitClassifier;

/** A route's rate limit as documented: null for none, the class, or a classifier's classes joined by `|`. */
export function rateLimitLabel(limit: RouteLimit | false | undefined): string | null {
  if (limit === false) return null;
  if (limit === undefined) return 'default';
  return typeof limit === 'string' ? limit : limit.classes.join('|');
}

/** A classifier with the classes it may choose attached. */
export function classifier(
  classes: readonly RateLimitClass[],
  choose: (req: Request, app: AppContext) => LimitTarget | Promise<LimitTarget>,
): RateLimitClassifier {
  return Object.assign(choose, { classes });
}

export function ruleFor(cls: RateLimitClass, config: Config): LimitRule {
  switch (cls) {
    case 'login':
      return config.rateLimitLogin;
    case 'registration':
      return config.rateLimitRegistration;
    case 'token-login':
      return config.rateLimitTokenLogin;
    case 'token-validate':
      return config.rateLimitTokenValidate;
    case 'social-login':
      return config.rateLimitSocialLogin;
    case 'social-api':
      return config.rateLimitSocialApi;
    case 'cache-invalidation':
      return config.rateLimitCacheInvalidation;
    case 'admin':
      return config.rateLimitAdmin;
    case 'second-factor':
      return config.rateLimitTwoFactor;
    case 'bridge':
      return config.rateLimitBridge;
    case 'bridge-invalid':
      return config.rateLimitBridgeInvalid;
    case 'session':
      return config.rateLimitSession;
    default:
      return config.rateLimitDefault;
  }
}

/** One hit that fails open, and the 429 answer: shared with module contexts (limits/consume.ts). */
export { consumeLimit, RATE_LIMITED_MESSAGE, tooManyRequests } from '../../limits/consume.js';

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

/** Forgets that the request was counted in `bucket` (its hit was refunded: credential-limits.ts). */
export function unmarkCounted(req: Request, bucket: string): void {
  (req as Counted)[COUNTED]?.delete(bucket);
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

export function sendTooMany(res: Response, r: LimitResult): void {
  res.status(429).json({ success: false, error: RATE_LIMITED_MESSAGE, code: Codes.RATE_LIMITED, retry_after: Math.max(1, r.retryAfterSec) });
}

/** The key of a request counted per client address (IPv6 by /64). */
export const addressKey = (req: Request): string => ipLimitKey(clientIp(req));

/**
 * Counts the request once against its class, for the client's address unless another key is given,
 * and sets the headers. Returns the result; the caller refuses when `allowed` is false.
 */
export async function limitRequest(
  app: AppContext,
  req: Request,
  res: Response,
  cls: RateLimitClass,
  key: string = addressKey(req),
): Promise<LimitResult | null> {
  if (!app.config.rateLimitsEnabled || countedIn(req, cls)) return null;
  markCounted(req, cls);
  const r = await consumeLimit(app, cls, key, ruleFor(cls, app.config));
  setLimitHeaders(res, r);
  if (!r.allowed) {
    app.metrics.rateLimited(cls);
    if (cls === 'login') app.metrics.login('limited');
  }
  return r;
}

/** Counts a request where its route's limit puts it: the class per address, or what the classifier chose. */
export async function limitRoute(app: AppContext, req: Request, res: Response, limit: RouteLimit): Promise<LimitResult | null> {
  if (typeof limit === 'string') return limitRequest(app, req, res, limit);
  const target = await limit(req, app);
  return limitRequest(app, req, res, target.cls, target.key);
}

/**
 * For a handler that learns only while it runs which class a request belongs in (POST /auth/register:
 * public sign-up or admin create): counts it there too, unless it already was, and refuses with 429.
 */
export async function chargeClass(app: AppContext, req: Request, res: Response, cls: RateLimitClass): Promise<void> {
  const r = await limitRequest(app, req, res, cls);
  if (r && !r.allowed) throw tooManyRequests(r);
}

/** Route-level limiter (defineRoute): a no-op when the early gate already counted this request. */
export function rateLimitFor(limit: RouteLimit | undefined, app: AppContext): RequestHandler {
  const route = limit ?? 'default';
  // A classifier's class is known only per request; whatever the gate counted, it counted for this route.
  const counted = typeof route === 'string' ? (req: Request) => countedIn(req, route) : wasCounted;
  return (req, res, next) => {
    // Usually the gate has counted the request already: then nothing to wait for.
    if (!app.config.rateLimitsEnabled || counted(req)) return next();
    limitRoute(app, req, res, route).then((r) => (r && !r.allowed ? sendTooMany(res, r) : next()), next);
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
export function accountId(identifier: string): string {
  const norm = identifier.normalize('NFKC').trim().toLowerCase();
  return norm ? createHash('sha256').update(norm).digest('base64url') : '';
}

/**
 * The key to pass to app.loginBackoff (reserve / recordFailure / recordSuccess): the account and the
 * caller's network, so failures from one place slow that place down without locking the owner out
 * everywhere. The shared per-account budget of consumeAccountLimit covers attempts from many places.
 */
export function loginAttemptKey(req: Request, identifier: string): string {
  return accountNetworkKey(identifier, clientIp(req));
}

/** loginAttemptKey for an address given by hand (gatehouse limits reset). */
export const accountNetworkKey = (identifier: string, ip: string): string => `${accountId(identifier)}|${ipNetworkKey(ip)}`;

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
  if (!own.allowed) {
    app.metrics.rateLimited('login-account');
    throw tooManyRequests(own);
  }
  const all = await consumeLimit(app, 'login-account-all', account, accountLimitRule(app.config));
  setLimitHeaders(res, all);
  if (!all.allowed) {
    app.metrics.rateLimited('login-account-all');
    throw tooManyRequests(all);
  }
}

/**
 * Takes back the hits one login attempt made (the route's class for the address and both account
 * budgets) when the attempt failed through no fault of the caller's, such as the database being
 * down: an outage must not leave accounts locked once it is over.
 */
export async function refundLoginAttempt(app: AppContext, req: Request, identifier: string): Promise<void> {
  if (!app.config.rateLimitsEnabled) return;
  const account = accountId(identifier);
  const refunds: Promise<void>[] = [];
  if (countedIn(req, 'login')) refunds.push(app.limiter.refund('login', ipLimitKey(clientIp(req))));
  if (account) {
    refunds.push(app.limiter.refund('login-account', `${account}|${ipNetworkKey(clientIp(req))}`));
    refunds.push(app.limiter.refund('login-account-all', account));
  }
  await Promise.all(refunds).catch((err: Error) => app.logger.warn({ err: err.message }, 'could not refund a login attempt'));
}

/** A class counted per live session (pending ones included) when the request carries one, else per address. */
export function perSession(cls: RateLimitClass): RateLimitClassifier {
  return classifier([cls], async (req, app) => {
    let id: string | null = null;
    try {
      id = await app.services.sessions.liveSessionId(readSessionToken(req).token);
    } catch {
      id = null;
    }
    return { cls, key: id ? `session:${id}` : addressKey(req) };
  });
}
