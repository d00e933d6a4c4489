import type { SessionRecord } from '../../data/repositories/session-repository.js';
import type { PublicUser } from '../../services/user-view.js';
import { JsonText } from '../respond.js';
import { iso } from './auth-responses.js';

/** What changes between bridge answers about one session: where the session came from and when. */
export interface PerRequest {
  cached: boolean;
  cacheSource: string;
  timestamp: string;
}

/** The per-session part of the bridge-validate answer: objects, not text. */
export interface BridgeHead {
  /** The public user plus the camelCase aliases its clients read. */
  user: Record<string, unknown>;
  session: Record<string, unknown>;
  expiresAt: string | null;
  /** The last answer made from this head and what it was made for (see bridgeAnswer); only bridgeAnswer sets it. */
  last: (PerRequest & { answer: JsonText }) | null;
}

/**
 * The per-session part of the bridge-validate answer: the user (the public user plus the camelCase
 * aliases its clients read), the session and its expiry. Built once per session record and user view
 * (the route caches it, and every answer about the session shares it: its parts never change).
 */
export function bridgeHead(s: SessionRecord, p: PublicUser): BridgeHead {
  const exp = iso(s.expires_at);
  const user = { ...p, userType: p.user_type, lastName: p.last_name, userName: p.user_name, isVerified: p.is_verified, twoFactor: p.two_factor };
  const session = {
    id: s.id,
    userId: s.user_id,
    user_id: s.user_id,
    expiresAt: exp,
    expires_at: exp,
    ipAddress: s.ip_address,
    userAgent: s.user_agent,
    lastUsedAt: iso(s.last_used_at),
    two_factor_verified: true,
  };
  return { user, session, expiresAt: exp, last: null };
}

/**
 * The whole answer as JSON text: one object (the cached head's parts and the fields that change per
 * request: where the session came from and when) serialised once, so the text is always what
 * JSON.stringify makes of the answer — no text is cut or joined.
 */
export function bridgeAnswer(head: BridgeHead, perRequest: PerRequest): JsonText {
  // Requests about one session in the same millisecond, from the same cache, get the same answer: the
  // last one is kept on its head, not made again (at thousands a second, most of them). A new one
  // replaces it there (a plain property write: a WeakMap entry per millisecond cost more than the look-up saved).
  const last = head.last;
  if (last && last.timestamp === perRequest.timestamp && last.cached === perRequest.cached && last.cacheSource === perRequest.cacheSource) return last.answer;
  const answer = new JsonText(serialise(head, perRequest));
  head.last = { cached: perRequest.cached, cacheSource: perRequest.cacheSource, timestamp: perRequest.timestamp, answer };
  return answer;
}

function serialise(head: BridgeHead, perRequest: PerRequest): string {
  return JSON.stringify({
    success: true,
    valid: true,
    user: head.user,
    session: head.session,
    expires_at: head.expiresAt,
    expiresAt: head.expiresAt,
    cached: perRequest.cached,
    cacheSource: perRequest.cacheSource,
    timestamp: perRequest.timestamp,
  });
}
