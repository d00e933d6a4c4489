import { ownView } from '../../audit/own-view.js';
import { expandTypes, ownSecurityTypes } from '../../audit/type-filter.js';
import { badRequest } from '../../errors/app-error.js';
import { defineRoute } from '../define-route.js';
import { auditEventsQuery, ownSecurityEventsQuery } from '../schemas/audit.schemas.js';

/**
 * The read side of the security-event record (src/audit, docs/audit.md): the admin query over every
 * event, and a user's own security events.
 */

/** The declared types a `type` filter names; a name or family matching none is a 400, not an empty page. */
export function typesOf(requested: string[], declared: Iterable<string>, what: string): string[] {
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
  summary: 'Search the audit log (admin)',
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

export const ownSecurityEvents = defineRoute({
  method: 'get',
  path: '/auth/user/me/security-events',
  summary: 'Your recent security events (sign-ins, changes)',
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
