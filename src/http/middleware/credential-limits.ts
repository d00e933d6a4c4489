import type { Request, Response } from 'express';
import type { CoreLimitClass } from '../../limits/limit-classes.js';
import type { LimitResult } from '../../limits/rate-limiter.js';
import { consumeClass, refundClass, type RateLimitDeps } from './rate-limit-request.js';

/*
 * The login and registration budgets are small (5 per 15 minutes, 3 per hour) because each hit may
 * test a password or create an account. The gate counts a request in its route's class before the
 * body is read, so a flood is refused unread; but a request then refused for its shape (malformed
 * JSON, `{}`, a form post, text/plain) tested nothing, and a user who typos their client four times
 * must not be locked out for 15 minutes. Such a refusal gives the credential hit back and is counted
 * in `default` instead, which is large and cheap.
 */

/** Classes whose hits stand for credential checks or sign-ups; both are counted per address. */
const CREDENTIAL_CLASSES: readonly CoreLimitClass[] = ['login', 'registration'];

/** What body parsing refuses (body-parser's error types, and json-body.ts's own). */
const BODY_ERROR_TYPES = new Set([
  'entity.parse.failed',
  'entity.too.large',
  'entity.verify.failed',
  'encoding.unsupported',
  'charset.unsupported',
  'request.size.invalid',
  'request.aborted',
]);

const BEFORE_CREDENTIALS = Symbol('refusedBeforeCredentials');

/** Marks an error as a refusal of the request's input, raised before any credential was looked at. */
export function refusedBeforeCredentials<E>(err: E): E {
  if (err !== null && typeof err === 'object') Object.defineProperty(err, BEFORE_CREDENTIALS, { value: true });
  return err;
}

/** Runs an input check inside a handler; what it throws is marked as refusedBeforeCredentials. */
export function beforeCredentials<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    throw refusedBeforeCredentials(err);
  }
}

export function isRefusedBeforeCredentials(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  if (BEFORE_CREDENTIALS in err) return true;
  const type = (err as { type?: unknown }).type;
  return typeof type === 'string' && BODY_ERROR_TYPES.has(type);
}

const LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'];

/**
 * For a request refused before credentials: refunds its hit in a credential class and counts it in
 * `default` (with default's headers). Returns default's result, or null when it held no credential hit.
 */
export async function recountAsDefault(deps: RateLimitDeps, req: Request, res: Response): Promise<LimitResult | null> {
  let held = false;
  for (const cls of CREDENTIAL_CLASSES) if (await refundClass(deps, req, cls)) held = true;
  if (!held) return null;
  for (const h of LIMIT_HEADERS) res.removeHeader(h);
  return consumeClass(deps, req, res, 'default');
}
