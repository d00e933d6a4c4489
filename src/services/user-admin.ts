import { afterCommit, type Transaction } from '../data/unit-of-work.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { forbidden, notFound } from '../errors/app-error.js';
import { invalidInput } from '../errors/zod-issues.js';
import { runAfterHooks } from './after-hooks.js';
import { adminUpdateEvents } from './user-audit.js';
import { text, type AdminUpdate } from './user-fields.js';
import type { UserServiceDeps } from './user-service.js';

export const isSuper = (u: { user_type: string } | null) => u?.user_type === 'superadmin';

/** The roles an admin who is not a superadmin may give a user they create; every other role is a superadmin's to give. */
export const ADMIN_GRANTABLE_ROLES: readonly string[] = ['customer', 'writer'];

/**
 * Who may create a user of `role` (ASVS 8.2.3): a superadmin, the operator at the CLI (no actor), or a
 * plain admin for a role in ADMIN_GRANTABLE_ROLES. The refusal comes before anything is written.
 */
export function assertMayCreateRole(actor: { user_type: string } | null, role: string): void {
  if (actor && !isSuper(actor) && !ADMIN_GRANTABLE_ROLES.includes(role)) {
    throw forbidden(`Only a superadmin can create a user of role ${role}`);
  }
}

/** What the admin changes share with the rest of the user service (its one writer and checks). */
export interface AdminKit {
  deps: UserServiceDeps;
  get(id: string): Promise<UserRecord>;
  assertCanManage(actor: UserRecord | null, target: UserRecord): void;
  assertEmailFree(email: string, exceptId?: string): Promise<void>;
  assertUserNameFree(userName: string | null | undefined, exceptId?: string): Promise<void>;
  write(id: string, patch: Partial<UserRecord>, tx?: Transaction | null): Promise<UserRecord>;
  changed(user: UserRecord, tx: Transaction | null | undefined): Promise<void>;
  report(event: string): (err: unknown) => void;
  clock(): Date;
}

/**
 * An admin's update and soft delete: each is one unit of work with the sign-out everywhere it needs
 * and its security events (user-audit.ts), so a failing step leaves neither the change nor an event.
 */
export function adminChanges(k: AdminKit) {
  async function update(actor: UserRecord | null, id: string, parsed: AdminUpdate): Promise<UserRecord> {
    const { disabled, ...input } = parsed;
    const target = await k.get(id);
    k.assertCanManage(actor, target);
    const self = actor?.id === target.id;
    const roleChange = input.user_type !== undefined && input.user_type !== target.user_type;
    if (roleChange && self) throw forbidden('You cannot change your own role');
    // Only a superadmin (or the operator at the CLI: no actor) changes anyone's role, to or from any
    // role (ASVS 8.2.3). Checked before anything is written, so the request's other fields are refused with it.
    if (roleChange && actor && !isSuper(actor)) throw forbidden("Only a superadmin can change a user's role");
    if (disabled && self) throw forbidden('You cannot disable your own account');
    const emailChange = input.email !== undefined && input.email !== target.email;
    if (emailChange && input.email !== undefined) await k.assertEmailFree(input.email, target.id);
    if (input.user_name && input.user_name !== target.user_name) await k.assertUserNameFree(input.user_name, target.id);

    const patch: Partial<UserRecord> = { ...input };
    // A user_type equal to the one read above is no change: left out of the write, so that an admin's
    // request cannot put back a role a superadmin changed in the meantime.
    if (!roleChange) delete patch.user_type;
    const disabling = disabled === true && !target.disabled_at;
    if (disabled !== undefined) patch.disabled_at = disabled ? (target.disabled_at ?? k.clock()) : null;
    // The change and the sign-out everywhere are one unit of work, as a password change is: were the
    // revocation to fail, nothing changed and the admin is told; caches and 'user.updated' follow the commit.
    return k.deps.transaction(async (tx) => {
      const updated = await k.write(target.id, patch, tx);
      for (const event of adminUpdateEvents(target, patch)) await k.deps.audit.record(event, { tx });
      if (roleChange || emailChange || disabling) {
        const revoked = await k.deps.sessions.revokeAllForUser(target.id, undefined, { tx });
        const reason = disabling ? 'user.disabled' : roleChange ? 'user.role_changed' : 'email.changed';
        if (revoked > 0)
          await k.deps.audit.record({ type: 'session.revoked', userId: target.id, details: { by: actor ? 'admin' : 'cli', count: revoked, reason } }, { tx });
      }
      await k.changed(updated, tx);
      return updated;
    });
  }

  async function softDelete(actor: UserRecord | null, id: string, reason?: string | null): Promise<UserRecord> {
    const target = await k.get(id);
    if (actor?.id === target.id) throw forbidden('You cannot delete your own account');
    k.assertCanManage(actor, target);
    const r = reason === undefined || reason === null || reason === '' ? null : text(500).safeParse(reason);
    if (r && !r.success) throw invalidInput(r.error, 'reason');
    // As adminUpdate: the row and the sign-out everywhere commit together; caches and 'user.deleted' follow.
    return k.deps.transaction(async (tx) => {
      const deleted = await k.write(target.id, { deleted_at: k.clock(), deletion_reason: r?.data || null }, tx);
      await k.deps.audit.record({ type: 'user.deleted', userId: target.id, details: {} }, { tx });
      const revoked = await k.deps.sessions.revokeAllForUser(target.id, undefined, { tx });
      if (revoked > 0)
        await k.deps.audit.record(
          { type: 'session.revoked', userId: target.id, details: { by: actor ? 'admin' : 'cli', count: revoked, reason: 'user.deleted' } },
          { tx },
        );
      await afterCommit(
        tx,
        async () => {
          await k.deps.sessions.invalidateUser(deleted.id);
          await runAfterHooks(k.deps.hooks, k.deps.logger, 'user.deleted', { user: deleted });
        },
        k.report('user.deleted'),
      );
      return deleted;
    });
  }

  // A revocation and its session.revoked event commit together (no part of the session's token or id
  // goes into it). `by`: an admin over HTTP, or the operator at the CLI (no actor).
  async function revokeSession(actor: UserRecord | null, userId: string, sessionId: string): Promise<void> {
    const target = await k.get(userId);
    k.assertCanManage(actor, target);
    const owned = (await k.deps.sessions.listForUser(target.id)).find((s) => s.id === sessionId);
    if (!owned) throw notFound('Session not found');
    await k.deps.transaction(async (tx) => {
      if (!(await k.deps.sessions.revokeById(sessionId, { tx }))) throw notFound('Session not found');
      const details = { by: actor ? 'admin' : 'cli', count: 1 };
      await k.deps.audit.record({ type: 'session.revoked', userId: target.id, details }, { tx });
    });
  }

  async function revokeAllSessions(actor: UserRecord | null, userId: string): Promise<number> {
    const target = await k.get(userId);
    k.assertCanManage(actor, target);
    return k.deps.transaction(async (tx) => {
      const revoked = await k.deps.sessions.revokeAllForUser(target.id, undefined, { tx });
      if (revoked > 0)
        await k.deps.audit.record({ type: 'session.revoked', userId: target.id, details: { by: actor ? 'admin' : 'cli', count: revoked } }, { tx });
      return revoked;
    });
  }

  return { update, softDelete, revokeSession, revokeAllSessions };
}
