import type { AuditActor, AuditEvent } from './audit-types.js';

/**
 * What a person sees of the events about them (GET /auth/user/me/security-events, the personal-data
 * export): their own doings as recorded, but nothing that identifies anyone else.
 */

/** Keys of details that hold someone's id (`by_user_id`, `adminId`, `actor_ids`). */
const ID_KEY = /(^|_)ids?$|Ids?$/;

function withoutOthersIds(v: unknown, me: string): unknown {
  if (Array.isArray(v)) return v.map((x) => withoutOthersIds(x, me));
  if (!v || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (k === 'identifier') continue;
    if (ID_KEY.test(k) && x !== me) continue;
    out[k] = withoutOthersIds(x, me);
  }
  return out;
}

/** An event as its subject sees it: another person as actor is only their kind. */
export type OwnAuditEvent = Omit<AuditEvent, 'actor'> & { actor: AuditActor | { user_type: string } };

/**
 * When someone else acted (an admin reset their second factor), the actor is only their kind
 * ({ user_type }), and that person's address, agent and request id are left out; ids of other people
 * in details are dropped.
 */
export function ownView(e: AuditEvent, me: string): OwnAuditEvent {
  const other = e.actor !== null && 'id' in e.actor && e.actor.id !== me ? e.actor : null;
  return {
    ...e,
    actor: other ? { user_type: other.user_type } : e.actor,
    ip: other ? null : e.ip,
    user_agent: other ? null : e.user_agent,
    request_id: other ? null : e.request_id,
    details: withoutOthersIds(e.details, me) as Record<string, unknown>,
  };
}
