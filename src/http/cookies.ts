import type { Response } from 'express';
import type { Config } from '../config/schema.js';
import { SESSION_COOKIE } from './request-context.js';

// The scheme is case-insensitive: PUBLIC_URL=HTTPS://… is https too.
const isSecure = (config: Config) => /^https:/i.test(config.publicBaseUrl.trim()) || config.cookieSameSite === 'none';

/** Sets the HttpOnly session cookie; Secure whenever the public URL is https (or SameSite=None). */
export function setSessionCookie(res: Response, config: Config, token: string, expiresAt: Date): void {
  const secure = isSecure(config);
  res.cookie(SESSION_COOKIE, token, {
    httpOnly: true,
    secure,
    sameSite: config.cookieSameSite,
    path: '/',
    expires: expiresAt,
  });
}

export function clearSessionCookie(res: Response, config: Config): void {
  const secure = isSecure(config);
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, secure, sameSite: config.cookieSameSite, path: '/' });
}
