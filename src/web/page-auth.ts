import type { Request, Response } from 'express';
import type { AppContext } from '../app-context.js';
import type { Config } from '../config/schema.js';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { isAppError } from '../errors/app-error.js';
import { markUser } from '../http/middleware/access-log.js';
import { HOST_SESSION_COOKIE, parseCookies, readSessionToken, SESSION_COOKIE } from '../http/request-context.js';
import { hostPrefixed, rotateCsrfBinding, webCookieSecure } from './page-security.js';

/** The browser's session on a page: the `session_id` cookie only (pages never read a header or query token). */
export interface PageSession {
  token: string;
  session: SessionRecord;
  user: UserRecord;
  pending: boolean;
}

/**
 * The cookie's session when it is live (a pending two-factor one included); null for none or a dead one.
 * With PUBLIC_URL https, a live session found under the plain `session_id` only (an API sign-in, or a
 * cookie from before the prefix) is moved to `__Host-session_id` on this page's answer, without a new
 * CSRF binding (the page's forms stay valid).
 */
export async function pageSession(app: AppContext, req: Request): Promise<PageSession | null> {
  const { token, source } = readSessionToken(req, {});
  if (!token || source !== 'cookie') return null;
  try {
    const v = await app.services.sessions.validate(token, { allowPending: true });
    markUser(req, v.user.id);
    const res = req.res;
    if (res && !res.headersSent && hostPrefixed(app.config) && parseCookies(req.headers.cookie)[HOST_SESSION_COOKIE] === undefined) {
      writeSessionCookie(res, app.config, token, v.session.expires_at);
    }
    return { token, session: v.session, user: v.user, pending: v.session.status !== 'active' };
  } catch (err) {
    if (isAppError(err) && err.status === 401) return null;
    throw err;
  }
}

type CookieConfig = Pick<Config, 'publicBaseUrl' | 'cookieSameSite'>;
const cookieOpts = (config: CookieConfig) => ({ httpOnly: true, secure: webCookieSecure(config), sameSite: config.cookieSameSite, path: '/' }) as const;

/** The session cookie under the pages' name; with the `__Host-` prefix, the plain `session_id` is cleared. */
function writeSessionCookie(res: Response, config: CookieConfig, token: string, expiresAt: Date): void {
  const prefixed = hostPrefixed(config);
  res.cookie(prefixed ? HOST_SESSION_COOKIE : SESSION_COOKIE, token, { ...cookieOpts(config), expires: expiresAt });
  if (prefixed) res.clearCookie(SESSION_COOKIE, cookieOpts(config));
}

/**
 * The session cookie as the pages set it: `__Host-session_id` when PUBLIC_URL is https, else the API's
 * `session_id` (the API reads both, so the API and the pages share a sign-in), HttpOnly, SameSite from
 * SESSION_COOKIE_SAMESITE (lax by default), and Secure unless the public URL is plain http on this
 * machine. A new session also gets a new CSRF binding (rotateCsrfBinding).
 */
export function setPageSessionCookie(res: Response, config: CookieConfig, token: string, expiresAt: Date): void {
  writeSessionCookie(res, config, token, expiresAt);
  rotateCsrfBinding(res, config);
}

/** Ends the browser's session cookie (under either name), and its CSRF binding with it. */
export function clearPageSessionCookie(res: Response, config: CookieConfig): void {
  res.clearCookie(SESSION_COOKIE, cookieOpts(config));
  if (hostPrefixed(config)) res.clearCookie(HOST_SESSION_COOKIE, cookieOpts(config));
  rotateCsrfBinding(res, config);
}
