import type { Response } from 'express';
import type { Config } from '../config/schema.js';
import { SESSION_COOKIE } from './request-context.js';

// The scheme is case-insensitive: PUBLIC_URL=HTTPS://… is https too.
const isSecure = (config: Config) => /^https:/i.test(config.publicBaseUrl.trim()) || config.cookieSameSite === 'none';

/** Sets an HttpOnly cookie on path /; Secure whenever the public URL is https (or SameSite=None). */
export function setHttpOnlyCookie(res: Response, config: Config, name: string, value: string, expiresAt: Date): void {
  res.cookie(name, value, { httpOnly: true, secure: isSecure(config), sameSite: config.cookieSameSite, path: '/', expires: expiresAt });
}

export function clearHttpOnlyCookie(res: Response, config: Config, name: string): void {
  res.clearCookie(name, { httpOnly: true, secure: isSecure(config), sameSite: config.cookieSameSite, path: '/' });
}

/** Sets the HttpOnly session cookie. */
export function setSessionCookie(res: Response, config: Config, token: string, expiresAt: Date): void {
  setHttpOnlyCookie(res, config, SESSION_COOKIE, token, expiresAt);
}

export function clearSessionCookie(res: Response, config: Config): void {
  clearHttpOnlyCookie(res, config, SESSION_COOKIE);
}
