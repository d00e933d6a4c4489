import type { SessionRecord } from '../../data/repositories/session-repository.js';
import type { PublicUser } from '../../services/user-view.js';
import { iso } from './auth-responses.js';

/**
 * The per-session part of the bridge-validate answer, as JSON text: success, valid, the user (the public
 * user plus the camelCase aliases its clients read), the session and its expiry. Built once per session
 * record and user view (the route caches it).
 */
export function bridgeHeadText(s: SessionRecord, p: PublicUser): string {
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
  return JSON.stringify({ success: true, valid: true, user, session, expires_at: exp, expiresAt: exp });
}

/**
 * The whole answer: the cached head (a JSON object's text) with the fields that change per request
 * appended, without parsing or re-serialising the head. Throws on a head that is not an object's text.
 */
export function bridgeAnswer(head: string, perRequest: { cached: boolean; cacheSource: string; timestamp: string }): string {
  if (head.length < 2 || head[0] !== '{' || head[head.length - 1] !== '}') throw new Error('bridge answer head must be a JSON object');
  const tail = JSON.stringify(perRequest);
  return head.length === 2 ? tail : `${head.slice(0, -1)},${tail.slice(1)}`;
}
