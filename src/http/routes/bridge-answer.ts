import type { SessionRecord } from '../../data/repositories/session-repository.js';
import type { PublicUser } from '../../services/user-view.js';
import { iso } from './auth-responses.js';

/** The per-session part of the bridge-validate answer: objects, not text. */
export interface BridgeHead {
  /** The public user plus the camelCase aliases its clients read. */
  user: Record<string, unknown>;
  session: Record<string, unknown>;
  expiresAt: string | null;
}

/**
 * The per-session part of the bridge-validate answer: the user (the public user plus the camelCase
 * aliases its clients read), the session and its expiry. Built once per session record and user view
 * (the route caches it, and every answer about the session shares it: never changed).
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
  return { user, session, expiresAt: exp };
}

/**
 * The whole answer as JSON text: one object (the cached head's parts and the fields that change per
 * request: where the session came from and when) serialised once, so the text is always what
 * JSON.stringify makes of the answer — no text is cut or joined.
 */
export function bridgeAnswer(head: BridgeHead, perRequest: { cached: boolean; cacheSource: string; timestamp: string }): string {
  // Requests about one session in the same millisecond, from the same cache, get the same answer: the
  // text of the last one is kept (per head), not made again (at thousands a second, most of them).
  const last = lastText.get(head);
  if (last && last.timestamp === perRequest.timestamp && last.cached === perRequest.cached && last.cacheSource === perRequest.cacheSource) return last.text;
  const text = serialise(head, perRequest);
  lastText.set(head, { ...perRequest, text });
  return text;
}

/** The last answer made from each head, with what it was made for. */
const lastText = new WeakMap<BridgeHead, { cached: boolean; cacheSource: string; timestamp: string; text: string }>();

function serialise(head: BridgeHead, perRequest: { cached: boolean; cacheSource: string; timestamp: string }): string {
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
