import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import type { Config } from '../../config/schema.js';
import { AppError } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import { consumeFailingOpen, type CountingDeps, type Hit } from '../../limits/fail-open.js';
import { limitClassesOf, type LimitDeclaring, type LimitTableConfig, type RateLimitClass } from '../../limits/limit-classes.js';
import type { LimitResult } from '../../limits/rate-limiter.js';
import type { Metrics } from '../../metrics/metrics.js';
import { JsonText, sendJson } from '../respond.js';
import { markRefused } from './access-log.js';
import { clientIp, ipLimitKey } from './client-ip.js';

/*
 * One request's hits: each class it was counted in, with the key it was counted under, so no layer
 * counts it twice and a hit given back is given back where it was taken. Plus the answer every
 * counted request carries: X-RateLimit-* and, when refused, 429 RATE_LIMITED.
 */

/** What counting a request needs. */
export interface RateLimitDeps extends CountingDeps {
  config: LimitTableConfig & Pick<Config, 'rateLimitsEnabled'>;
  metrics: Pick<Metrics, 'rateLimited' | 'login'>;
  /** The module registry: its manifests declare the module classes. */
  modules: { registry?(): readonly LimitDeclaring[] };
}

const HITS = Symbol('rateLimitHits');
/** The window each hit was counted in (its result's resetAt), where consumeClass counted it. */
const WINDOWS = Symbol('rateLimitWindows');
/** Classes whose hit was given back for good (giveBackClass): still counted, never given back twice. */
const GIVEN_BACK = Symbol('rateLimitGivenBack');
type WithHits = Request & { [HITS]?: Map<string, string>; [WINDOWS]?: Map<string, number>; [GIVEN_BACK]?: Set<string> };

export function countedIn(req: Request, cls: string): boolean {
  return (req as WithHits)[HITS]?.has(cls) ?? false;
}

export function wasCounted(req: Request): boolean {
  return ((req as WithHits)[HITS]?.size ?? 0) > 0;
}

/** The request's hit in `cls`, if it took one and has not given it back for good. */
export function hitIn(req: Request, cls: string): Hit | null {
  const r = req as WithHits;
  const key = r[HITS]?.get(cls);
  if (key === undefined || r[GIVEN_BACK]?.has(cls)) return null;
  const resetAt = r[WINDOWS]?.get(cls);
  return resetAt === undefined ? { bucket: cls, key } : { bucket: cls, key, resetAt };
}

/** Records that the request took its hit in `cls` under `key` (counted by the fast lane, then handed on). */
export function record(req: Request | IncomingMessage, cls: string, key: string): void {
  const r = req as WithHits;
  (r[HITS] ??= new Map()).set(cls, key);
}

const PRECOUNTED = Symbol('rateLimitPrecounted');

/**
 * Records a hit counted before the app got the request (the fast lane, which then hands it on), with
 * its result: the gate, finding it counted, sets its headers where it would have set them itself
 * (setPrecountedHeaders), so the answer's headers come in the app's order.
 */
export function recordCounted(req: IncomingMessage, cls: string, key: string, r: LimitResult): void {
  record(req, cls, key);
  ((req as WithHits)[WINDOWS] ??= new Map()).set(cls, r.resetAt);
  (req as { [PRECOUNTED]?: LimitResult })[PRECOUNTED] = r;
}

/** The headers of a hit counted before the app got the request (recordCounted), if there is one. */
export function setPrecountedHeaders(req: Request, res: Response): void {
  const r = (req as { [PRECOUNTED]?: LimitResult })[PRECOUNTED];
  if (r && !res.headersSent) setLimitHeaders(res, r);
}

export const RATE_LIMITED_MESSAGE = 'Too many requests';

/** The seconds a refused client is told to wait, never under one. */
const retryAfterSecOf = (r: LimitResult): number => Math.max(1, r.retryAfterSec);

/**
 * A count as header text. `String(n)` puts the string in V8's number-to-string cache, which lives in the
 * old generation: a figure that differs on every answer (X-RateLimit-Remaining) then survives the
 * young-generation collections and dies in the old one, about 36 bytes per request and a mark-compact
 * every few seconds under load with limits on (bench/results/limits-old-space-*.txt). `toFixed(0)`
 * builds the same digits for any integer below 1e21 without the cache.
 */
export const countText = (n: number): string => (Number.isInteger(n) && Math.abs(n) < 1e21 ? n.toFixed(0) : String(n));

/**
 * The X-RateLimit-* headers of one result, as name, value pairs in their order (plus Retry-After when
 * refused), appended to `out` (the fast lane's head block: no array of their own on its path) and returned.
 */
export function limitHeaderPairs(r: LimitResult, out: string[] = []): string[] {
  out.push('X-RateLimit-Limit', String(r.limit), 'X-RateLimit-Remaining', countText(r.remaining), 'X-RateLimit-Reset', String(r.resetAt));
  if (!r.allowed) out.push('Retry-After', String(retryAfterSecOf(r)));
  return out;
}

/** X-RateLimit-* of the bucket closest to refusing; a later, tighter bucket replaces an earlier one. */
export function setLimitHeaders(res: Response, r: LimitResult): void {
  const prev = res.getHeader('X-RateLimit-Remaining');
  if (prev !== undefined && r.allowed && Number(prev) < r.remaining) return;
  const pairs = limitHeaderPairs(r);
  for (let i = 0; i < pairs.length; i += 2) res.setHeader(pairs[i], pairs[i + 1]);
}

export function tooManyRequests(r: LimitResult): AppError {
  return new AppError(429, Codes.RATE_LIMITED, RATE_LIMITED_MESSAGE, undefined, { retry_after: retryAfterSecOf(r) });
}

/**
 * Where a request's 429 is a page rather than JSON (the hosted pages, src/web), the renderer that
 * layer left in `res.locals` before the gate ran.
 */
export const TOO_MANY_PAGE = 'tooManyPage';

/** The body of a 429 from a limiter. */
export const tooManyBody = (r: LimitResult) => ({
  success: false,
  error: RATE_LIMITED_MESSAGE,
  code: Codes.RATE_LIMITED,
  retry_after: retryAfterSecOf(r),
});

/** tooManyBody's text up to the one figure that varies, built once (a flood is refused thousands of times a second). */
const TOO_MANY_HEAD = JSON.stringify(tooManyBody({ retryAfterSec: 1 } as LimitResult)).replace(/1\}$/, '');

/** The body of a 429 from a limiter as JSON text: the same bytes as JSON.stringify(tooManyBody(r)), without building an object. */
export const tooManyText = (r: LimitResult): JsonText => new JsonText(`${TOO_MANY_HEAD}${countText(retryAfterSecOf(r))}}`);

export function sendTooMany(res: Response, r: LimitResult): void {
  const page: unknown = res.locals[TOO_MANY_PAGE];
  if (typeof page === 'function') return void (page as (retryAfterSec: number) => void)(retryAfterSecOf(r));
  sendJson(res, 429, tooManyText(r));
}

/** The key of a request counted per client address (IPv6 by /64). */
export const addressKey = (req: Request): string => ipLimitKey(clientIp(req));

/**
 * Counts the request once in its class, for the client's address unless another key is given, and
 * sets the headers. Returns the result (null when limits are off or it was counted there already);
 * the caller refuses when `allowed` is false.
 */
export async function consumeClass(
  deps: RateLimitDeps,
  req: Request,
  res: Response,
  cls: RateLimitClass,
  key: string = addressKey(req),
): Promise<LimitResult | null> {
  if (!deps.config.rateLimitsEnabled || countedIn(req, cls)) return null;
  const { rule } = limitClassesOf(deps.config, deps.modules.registry?.() ?? []).get(cls);
  record(req, cls, key);
  const r = await consumeFailingOpen(deps, cls, key, rule);
  ((req as WithHits)[WINDOWS] ??= new Map()).set(cls, r.resetAt);
  setLimitHeaders(res, r);
  if (!r.allowed) {
    deps.metrics.rateLimited(cls);
    if (cls === 'login') deps.metrics.login('limited');
    // Its answer is a 429 with no access line of its own: the refusal log counts it (access-log.ts).
    markRefused(req, cls);
  }
  return r;
}

/** Gives back the request's hit in `cls` (where it was taken) and forgets it; false when it held none. */
export async function refundClass(deps: Pick<RateLimitDeps, 'limiter'>, req: Request, cls: string): Promise<boolean> {
  const hit = hitIn(req, cls);
  if (!hit) return false;
  await deps.limiter.refund(hit.bucket, hit.key, hit.resetAt);
  (req as WithHits)[HITS]?.delete(cls);
  return true;
}

/**
 * Gives back the request's hit in `cls` for good: a password check in `login` that passed
 * (docs/rate-limits.md, "Successful sign-ins give their hit back"). The hit stays recorded, so no later
 * layer counts the request in another class, and it goes back once only, to the window that counted
 * it. A store that fails is logged, never the request's failure. False when the request held no hit there.
 */
export async function giveBackClass(deps: Pick<RateLimitDeps, 'limiter' | 'logger'>, req: Request, cls: string): Promise<boolean> {
  const hit = hitIn(req, cls);
  if (!hit) return false;
  // Marked before the await: a second call on this request gives nothing back.
  ((req as WithHits)[GIVEN_BACK] ??= new Set()).add(cls);
  try {
    await deps.limiter.refund(hit.bucket, hit.key, hit.resetAt);
  } catch (err) {
    deps.logger.warn({ err: (err as Error)?.message, bucket: cls }, 'could not give back a rate-limit hit');
  }
  return true;
}
