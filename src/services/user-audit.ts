import type { AuditInput } from '../audit/audit-types.js';
import type { AuditService } from '../audit/audit-service.js';
import { FLOW_OWNED_USER_COLUMNS } from '../data/models/user-columns.js';
import type { UserRecord } from '../data/repositories/user-repository.js';

/** What the user service needs of the security-event record: writes in the change's unit of work. */
export type UserAudit = Pick<AuditService, 'record'>;

/** How a user came to be (`user.created` details.via). */
export type CreatedVia = 'admin' | 'cli' | 'registration' | 'social';

/**
 * Columns a `patch` changes without a `user.updated` field for them:
 * - columns written only by a core flow (user-columns.ts `flow`): each flow records its own event
 *   (`email.changed`, `password.*`, `user.role_changed`, `user.disabled`/`enabled`, `user.deleted`,
 *   `email.verified`, `two_factor.*`), and the row timestamps change with every write;
 * - `first_time`: bookkeeping (the onboarding flow's "has seen the first run" flag), not a fact about the person.
 * A patch that sets `deleted_at` (a personal-data erasure) records nothing: the erasure's own event says it.
 */
const QUIET_ON_PATCH: ReadonlySet<string> = new Set([...FLOW_OWNED_USER_COLUMNS.keys(), 'first_time']);

/** Columns an admin update reports with an event of their own rather than as `user.updated` fields. */
const OWN_EVENT_ON_ADMIN_UPDATE: ReadonlySet<string> = new Set(['email', 'user_type', 'disabled_at', 'updated_at']);

/** Whether a patch may record `user.updated` at all (else no read before the write is needed). */
export function patchMayBeAudited(values: Partial<UserRecord>): boolean {
  if ('deleted_at' in values) return false;
  return Object.keys(values).some((k) => !QUIET_ON_PATCH.has(k));
}

const comparable = (v: unknown): unknown => {
  if (v === undefined || v === null) return null;
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'object') return JSON.stringify(v);
  return v;
};

/** Names of the keys of `values` whose value differs from `before` (never the values themselves). */
function changed(before: UserRecord | null, values: Partial<UserRecord>, skip: ReadonlySet<string>): string[] {
  return Object.keys(values)
    .filter((k) => !skip.has(k))
    .filter((k) => comparable((before as Record<string, unknown> | null)?.[k]) !== comparable((values as Record<string, unknown>)[k]))
    .sort();
}

/** The `user.updated` event of a patch (a profile update, a module's fields, a picture), or null when nothing audited changed. */
export function patchEvent(before: UserRecord | null, values: Partial<UserRecord>, userId: string): AuditInput | null {
  if (!patchMayBeAudited(values)) return null;
  const fields = changed(before, values, QUIET_ON_PATCH);
  return fields.length ? { type: 'user.updated', userId, details: { fields } } : null;
}

/**
 * The events of an admin update, in the order they are written: `user.role_changed` (from, to),
 * `email.changed` (the previous address as the identifier: see below), `user.disabled` / `user.enabled`, then `user.updated` with
 * the names of every other changed field (`is_verified` and `two_factor` included: an admin's change
 * of them has no other event).
 *
 * `email.changed` keeps the previous address only as the event's identifier (`details.identifier` on the
 * wire, its own column in the store), never elsewhere in details: erasure anonymizes a user's past events
 * by their identifying columns (ip, agent, identifier), so it goes with them, whereas an address in a
 * details object would outlive the erasure. It is what the security notice needs to warn the old inbox
 * (src/audit/security-notices.ts): whoever took over an account by changing its address must not be the
 * only one told. The new address is on the user.
 */
export function adminUpdateEvents(target: UserRecord, patch: Partial<UserRecord>): AuditInput[] {
  const userId = target.id;
  const out: AuditInput[] = [];
  if (patch.user_type !== undefined && patch.user_type !== target.user_type) {
    out.push({ type: 'user.role_changed', userId, details: { from: target.user_type, to: patch.user_type } });
  }
  if (patch.email !== undefined && patch.email !== target.email) out.push({ type: 'email.changed', userId, details: { identifier: target.email } });
  if (patch.disabled_at !== undefined) {
    if (patch.disabled_at && !target.disabled_at) out.push({ type: 'user.disabled', userId, details: {} });
    if (!patch.disabled_at && target.disabled_at) out.push({ type: 'user.enabled', userId, details: {} });
  }
  const fields = changed(target, patch, OWN_EVENT_ON_ADMIN_UPDATE);
  if (fields.length) out.push({ type: 'user.updated', userId, details: { fields } });
  return out;
}

/**
 * `user.created`. An admin's or the CLI's creation takes its actor from the scope (the admin, or
 * `{via:'cli'}`); a public registration or social sign-up is the new user acting for themself, as a
 * sign-in is the user signing in, so the actor is the new user (an anonymous request has no other).
 */
export function createdEvent(user: UserRecord, via: CreatedVia, provider?: string): AuditInput {
  const self = via === 'registration' || via === 'social';
  return {
    type: 'user.created',
    userId: user.id,
    ...(self ? { actor: { id: user.id, user_type: user.user_type } } : {}),
    details: { via, user_type: user.user_type, ...(provider ? { provider } : {}) },
  };
}
