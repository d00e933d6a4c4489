import type { Request, Response } from 'express';
import type { AppContext } from '../app-context.js';
import type { Config } from '../config/schema.js';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { isAppError } from '../errors/app-error.js';
import { markUser } from '../http/middleware/access-log.js';
import { readSessionToken, SESSION_COOKIE } from '../http/request-context.js';
import { rotateCsrfBinding, webCookieSecure } from './page-security.js';

/** The browser's session on a page: the `session_id` cookie only (pages never read a header or query token). */
export interface PageSession {
  token: string;
  session: SessionRecord;
  user: UserRecord;
  pending: boolean;
}

/** The cookie's session when it is live (a pending two-factor one included); null for none or a dead one. */
export async function pageSession(app: AppContext, req: Request): Promise<PageSession | null> {
  const { token, source } = readSessionToken(req, {});
  if (!token || source !== 'cookie') return null;
  try {
    const v = await app.services.sessions.validate(token, { allowPending: true });
    markUser(req, v.user.id);
    return { token, session: v.session, user: v.user, pending: v.session.status !== 'active' };
  } catch (err) {
    if (isAppError(err) && err.status === 401) return null;
    throw err;
  }
}

/**
 * The session cookie as the pages set it: the API's cookie (same name, so the API and the pages share a
 * sign-in), HttpOnly, SameSite from SESSION_COOKIE_SAMESITE (lax by default), and Secure unless the
 * public URL is plain http on this machine. A new session also gets a new CSRF binding (rotateCsrfBinding).
 */
export function setPageSessionCookie(res: Response, config: Pick<Config, 'publicBaseUrl' | 'cookieSameSite'>, token: string, expiresAt: Date): void {
  res.cookie(SESSION_COOKIE, token, { httpOnly: true, secure: webCookieSecure(config), sameSite: config.cookieSameSite, path: '/', expires: expiresAt });
  rotateCsrfBinding(res, config);
}

/** Ends the browser's session cookie, and its CSRF binding with it. */
export function clearPageSessionCookie(res: Response, config: Pick<Config, 'publicBaseUrl' | 'cookieSameSite'>): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, secure: webCookieSecure(config), sameSite: config.cookieSameSite, path: '/' });
  rotateCsrfBinding(res, config);
}
