import type { Response } from 'express';
import type { Config } from '../config/schema.js';
import { SESSION_COOKIE } from './request-context.js';

/** Sets the HttpOnly session cookie; Secure whenever the public URL is https (or SameSite=None). */
export function setSessionCookie(res: Response, config: Config, token: string, expiresAt: Date): void {
  const secure = config.publicBaseUrl.startsWith('https:') || config.cookieSameSite === 'none';
  res.cookie(SESSION_COOKIE, token, {
    httpOnly: true,
    secure,
    sameSite: config.cookieSameSite,
    path: '/',
    expires: expiresAt,
  });
}

export function clearSessionCookie(res: Response, config: Config): void {
  const secure = config.publicBaseUrl.startsWith('https:') || config.cookieSameSite === 'none';
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, secure, sameSite: config.cookieSameSite, path: '/' });
}
