import type { AuditActor, AuditEvent } from '../../audit/audit-types.js';
import { expandTypes, ownSecurityTypes } from '../../audit/type-filter.js';
import { badRequest } from '../../errors/app-error.js';
import { defineRoute } from '../define-route.js';
import { auditEventsQuery, ownSecurityEventsQuery } from '../schemas/audit.schemas.js';

/**
 * The read side of the security-event record (src/audit, docs/audit.md): the admin query over every
 * event, and a user's own security events.
 */

/** The declared types a `type` filter names; a name or family matching none is a 400, not an empty page. */
function typesOf(requested: string[], declared: Iterable<string>, what: string): string[] {
  const { types, unknown } = expandTypes(requested, declared);
  if (unknown.length) {
    const message = `${unknown.join(', ')}: not ${what}`;
    throw badRequest(`type: ${message}`, [{ field: 'type', message }]);
  }
  return types;
}

export const listAuditEvents = defineRoute({
  method: 'get',
  path: '/auth/admin/audit-events',
  auth: { roles: ['admin', 'superadmin'] },
  rateLimit: 'admin',
  query: auditEventsQuery,
  async handler({ query, app }) {
    const audit = app.services.audit;
    const page = await audit.list({
      userId: query.user_id,
      actorId: query.actor_id,
      types: query.type ? typesOf(query.type, audit.types().keys(), 'a declared event type (docs/audit.md lists them)') : undefined,
      outcome: query.outcome,
      ip: query.ip,
      since: query.since,
      until: query.until,
      limit: query.limit,
      cursor: query.cursor,
    });
    return { success: true, data: page };
  },
});

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

/**
 * An event as its subject sees it: when someone else acted (an admin reset their second factor), the
 * actor is only their kind ({ user_type }), and that person's address, agent and request id are left
 * out; ids of other people in details are dropped.
 */
export type OwnAuditEvent = Omit<AuditEvent, 'actor'> & { actor: AuditActor | { user_type: string } };

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

export const ownSecurityEvents = defineRoute({
  method: 'get',
  path: '/auth/user/me/security-events',
  auth: 'session',
  query: ownSecurityEventsQuery,
  async handler({ query, auth, app }) {
    const own = ownSecurityTypes(app.services.audit.types().keys());
    const types = query.type ? typesOf(query.type, own, 'one of your security event types (sign-ins, sessions, password, email, 2FA, passkeys, social)') : own;
    const page = await app.services.audit.list({
      userId: auth.user.id,
      types,
      since: query.since,
      until: query.until,
      limit: query.limit,
      cursor: query.cursor,
    });
    return { success: true, data: { events: page.events.map((e) => ownView(e, auth.user.id)), next_cursor: page.next_cursor } };
  },
});
