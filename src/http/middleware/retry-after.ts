import type { Response } from 'express';
import type { AppError } from '../../errors/app-error.js';

/** When a refusal names no wait of its own: a spent budget usually returns within a minute or so. */
export const DEFAULT_RATE_LIMIT_RETRY_SEC = 60;
/** A feature switched off or a dependency down: worth asking again soon, not in a tight loop. */
export const DEFAULT_UNAVAILABLE_RETRY_SEC = 30;

/**
 * Every 429 and 503 tells the client when to ask again (proxies and HTTP clients read the header, not
 * the body): the error's own `retry_after` when it has one, else a default. A header already set (the
 * limiter's exact window) is kept.
 */
export function setRetryAfter(res: Response, err: AppError): void {
  const sec = retryAfterOf(err);
  if (sec !== null && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', String(sec));
}

/** The seconds a 429 or 503 asks the client to wait (its own `retry_after`, else the default); null for other statuses. */
export function retryAfterOf(err: AppError): number | null {
  if (err.status !== 429 && err.status !== 503) return null;
  const given = Number(err.extra?.retry_after);
  const fallback = err.status === 429 ? DEFAULT_RATE_LIMIT_RETRY_SEC : DEFAULT_UNAVAILABLE_RETRY_SEC;
  return Number.isFinite(given) && given >= 1 ? Math.ceil(given) : fallback;
}
