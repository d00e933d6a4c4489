import type { Response } from 'express';
import type { Config } from '../config/schema.js';
import { hostPrefixed, rotateCsrfBinding } from '../web/page-security.js';
import { HOST_SESSION_COOKIE, SESSION_COOKIE } from './request-context.js';

// The scheme is case-insensitive: PUBLIC_URL=HTTPS://… is https too.
const isSecure = (config: Config) => /^https:/i.test(config.publicBaseUrl.trim()) || config.cookieSameSite === 'none';

/** Sets an HttpOnly cookie on path /; Secure whenever the public URL is https (or SameSite=None). */
export function setHttpOnlyCookie(res: Response, config: Config, name: string, value: string, expiresAt: Date): void {
  res.cookie(name, value, { httpOnly: true, secure: isSecure(config), sameSite: config.cookieSameSite, path: '/', expires: expiresAt });
}

export function clearHttpOnlyCookie(res: Response, config: Config, name: string): void {
  res.clearCookie(name, { httpOnly: true, secure: isSecure(config), sameSite: config.cookieSameSite, path: '/' });
}

/**
 * Sets the HttpOnly session cookie. With WEB_PAGES on, a session that begins here (an API or module
 * sign-in in a browser: passkey autofill on /login, a social callback, a token login) also gets a new
 * CSRF binding for the pages, as a sign-in on a page does (rotateCsrfBinding); a refresh of the same
 * session (`refresh: true`) keeps it, so forms already open stay valid.
 */
export function setSessionCookie(res: Response, config: Config, token: string, expiresAt: Date, opts: { refresh?: boolean } = {}): void {
  // The spec's name, which the original's clients and backends know; the pages move it to the `__Host-`
  // name on their next answer. A pages' cookie of an earlier sign-in is cleared, so it cannot shadow this one.
  setHttpOnlyCookie(res, config, SESSION_COOKIE, token, expiresAt);
  if (hostPrefixed(config) && !opts.refresh) clearHttpOnlyCookie(res, config, HOST_SESSION_COOKIE);
  if (config.webPages && !opts.refresh) rotateCsrfBinding(res, config);
}

/** Ends the session cookie; with WEB_PAGES on, the pages' CSRF binding with it. */
export function clearSessionCookie(res: Response, config: Config): void {
  clearHttpOnlyCookie(res, config, SESSION_COOKIE);
  if (hostPrefixed(config)) clearHttpOnlyCookie(res, config, HOST_SESSION_COOKIE);
  if (config.webPages) rotateCsrfBinding(res, config);
}
