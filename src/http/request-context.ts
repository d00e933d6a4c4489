import type { Request } from 'express';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';

/** Who is calling, once the route's auth has run. */
export interface AuthState {
  token: string | null;
  /** Where the token came from; cookie-borne tokens get CSRF checks on state changes. */
  tokenSource: 'header' | 'query' | 'cookie' | 'body' | null;
  session: SessionRecord | null;
  user: UserRecord | null;
  bridge: boolean;
}

/** The session cookie's name in the spec (the API sets it; every route reads it). */
const SESSION_COOKIE = 'session_id';
/**
 * The hosted pages' session cookie when PUBLIC_URL is https (ASVS 3.3.1): the browser takes a `__Host-`
 * cookie only with Secure, Path=/ and no Domain, so a sibling subdomain cannot plant or shadow it.
 */
const HOST_SESSION_COOKIE = '__Host-session_id';

/** The session token a Cookie header carries: the `__Host-` cookie first, then the plain one. */
export function sessionCookieToken(cookieHeader: string | undefined): string | undefined {
  const jar = parseCookies(cookieHeader);
  return jar[HOST_SESSION_COOKIE] || jar[SESSION_COOKIE] || undefined;
}

/** Parses the Cookie header without a dependency; later duplicates do not override the first. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header || header.length > 8192) return out;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 1) continue;
    const name = part.slice(0, i).trim();
    if (name in out) continue;
    let value = part.slice(i + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      out[name] = decodeURIComponent(value);
    } catch {
      out[name] = value;
    }
  }
  return out;
}

/** The header that carries a session token, before the query and the cookie. */
const SESSION_HEADER = 'x-session-id';
/** Every header readSessionToken reads: what a route's session depends on (the fast lane's plain headers include them). */
export const SESSION_TOKEN_HEADERS = [SESSION_HEADER, 'cookie'] as const;

/** The session token from `X-Session-ID`, then `?session_id=`, then the `__Host-session_id` or `session_id` cookie. */
export function readSessionToken(
  req: Request,
  query: Record<string, unknown> | undefined = req.query,
): { token: string | null; source: AuthState['tokenSource'] } {
  const header = req.headers[SESSION_HEADER];
  if (typeof header === 'string' && header.trim()) return { token: header.trim(), source: 'header' };
  const q = query?.session_id;
  if (typeof q === 'string' && q.trim()) return { token: q.trim(), source: 'query' };
  const cookie = sessionCookieToken(req.headers.cookie);
  if (cookie) return { token: cookie, source: 'cookie' };
  return { token: null, source: null };
}

export { HOST_SESSION_COOKIE, SESSION_COOKIE };
