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

const SESSION_COOKIE = 'session_id';

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

/** The session token from `X-Session-ID`, then `?session_id=`, then the `session_id` cookie. */
export function readSessionToken(
  req: Request,
  query: Record<string, unknown> | undefined = req.query,
): { token: string | null; source: AuthState['tokenSource'] } {
  const header = req.headers['x-session-id'];
  if (typeof header === 'string' && header.trim()) return { token: header.trim(), source: 'header' };
  const q = query?.session_id;
  if (typeof q === 'string' && q.trim()) return { token: q.trim(), source: 'query' };
  const cookie = parseCookies(req.headers.cookie)[SESSION_COOKIE];
  if (cookie) return { token: cookie, source: 'cookie' };
  return { token: null, source: null };
}

export { SESSION_COOKIE };
