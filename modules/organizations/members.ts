import { Op } from 'sequelize';
import { AppError, badRequest, type ModuleContext, type SignedIn } from '../../src/module-api.js';
import { access, grantOf, lockOrg, mayGive, type Access } from './access.js';
import { lastOwner, memberNotFound, orgForbidden } from './errors.js';
import { newId } from './ids.js';
import { decodeCursor, pageOf } from './page.js';
import { members, plain, type MemberRow } from './store.js';

const unknownRole = (role: string) =>
  badRequest(`role: ${role} is not a role of this organization`, [{ field: 'role', message: 'is not a role of this organization' }]);

/** GET /auth/organizations/{id}/members: any member may see who else is in it (keyset, in joining order). */
export async function listMembers(ctx: ModuleContext, auth: SignedIn, ref: string, q: { limit: number; cursor?: string }) {
  const a = await access(ctx, auth, ref);
  const after = decodeCursor(q.cursor);
  const rows = (
    await members(ctx).findAll({
      where: { organization_id: a.org.id, ...(after ? { id: { [Op.gt]: after } } : {}) },
      order: [['id', 'ASC']],
      limit: q.limit + 1,
    })
  ).map((m) => plain<MemberRow>(m));
  const page = pageOf(rows, q.limit, (r) => r.id);
  const users = new Map((await ctx.users.findMany(page.rows.map((r) => r.user_id))).map((u) => [u.id, u]));
  return {
    members: page.rows.map((m) => {
      const u = users.get(m.user_id);
      return { user_id: m.user_id, email: u?.email ?? null, name: u?.name ?? null, role: m.role, joined_at: new Date(m.created_at).toISOString() };
    }),
    next_cursor: page.next_cursor,
  };
}

/** The member the caller may act on: only owners (and superadmins) touch an owner, and no one acts on a role above their own. */
async function assertMayActOn(ctx: ModuleContext, a: Access, target: MemberRow) {
  const grant = await grantOf(ctx, a.org.id, target.role);
  if (!grant || !mayGive(a, target.role, grant)) throw orgForbidden(`Your role may not change a member whose role is ${target.role}`);
}

/**
 * PATCH /auth/organizations/{id}/members/{user_id} {role} (members:update_role). Under the
 * organization's lock: demoting the last owner is 409 ORG_LAST_OWNER, even with two demotions at once.
 */
export async function setRole(ctx: ModuleContext, auth: SignedIn, ref: string, userId: string, role: string) {
  const a = await access(ctx, auth, ref, 'members:update_role');
  const grant = await grantOf(ctx, a.org.id, role);
  if (!grant) throw unknownRole(role);
  if (!mayGive(a, role, grant)) throw orgForbidden(`Your role may not give the role ${role}`);
  return applyRole(ctx, a.org.id, userId, role, (target) => assertMayActOn(ctx, a, target));
}

/** Gives the member `role` under the organization's lock, keeping an owner (the API's and the CLI's path). */
export async function applyRole(ctx: ModuleContext, orgId: string, userId: string, role: string, guard?: (target: MemberRow) => Promise<void>) {
  return ctx.db.transaction(async (tx) => {
    await lockOrg(ctx, orgId, tx);
    const row = await members(ctx).findOne({ where: { organization_id: orgId, user_id: userId }, transaction: tx });
    if (!row) throw memberNotFound();
    const target = plain<MemberRow>(row);
    await guard?.(target);
    // The role may have been deleted since it was checked: the roles' changes take the same lock.
    if (!(await grantOf(ctx, orgId, role, tx))) throw unknownRole(role);
    if (target.role === 'owner' && role !== 'owner') {
      const owners = await members(ctx).count({ where: { organization_id: orgId, role: 'owner' }, transaction: tx });
      if (owners <= 1) throw lastOwner();
    }
    if (target.role !== role) {
      await members(ctx).update({ role, updated_at: new Date() }, { where: { id: target.id }, transaction: tx });
      await ctx.audit.record(
        { type: 'organizations.member_role_changed', userId, details: { organization_id: orgId, role, previous_role: target.role } },
        { tx },
      );
    }
    return { user_id: userId, role, joined_at: new Date(target.created_at).toISOString() };
  });
}

/**
 * DELETE /auth/organizations/{id}/members/{user_id}: members:remove, or oneself (leaving). The last
 * owner can neither be removed nor leave (409 ORG_LAST_OWNER), decided under the organization's lock.
 */
export async function removeMember(ctx: ModuleContext, auth: SignedIn, ref: string, userId: string) {
  const self = userId === auth.user.id;
  const a = await access(ctx, auth, ref, self ? undefined : 'members:remove');
  return dropMember(ctx, a.org.id, userId, self, self ? undefined : (target) => assertMayActOn(ctx, a, target));
}

/** Removes the member under the organization's lock, keeping an owner (the API's and the CLI's path). */
export async function dropMember(ctx: ModuleContext, orgId: string, userId: string, left: boolean, guard?: (target: MemberRow) => Promise<void>) {
  return ctx.db.transaction(async (tx) => {
    await lockOrg(ctx, orgId, tx);
    const row = await members(ctx).findOne({ where: { organization_id: orgId, user_id: userId }, transaction: tx });
    if (!row) throw memberNotFound();
    const target = plain<MemberRow>(row);
    await guard?.(target);
    if (target.role === 'owner') {
      const owners = await members(ctx).count({ where: { organization_id: orgId, role: 'owner' }, transaction: tx });
      if (owners <= 1) throw lastOwner();
    }
    await members(ctx).destroy({ where: { id: target.id }, transaction: tx });
    await ctx.audit.record(
      { type: 'organizations.member_removed', userId, details: { organization_id: orgId, role: target.role, ...(left ? { left: true } : {}) } },
      { tx },
    );
    return { user_id: userId, removed: true, left };
  });
}

/** Adds a user straight away (the CLI's add-member): 409 ORG_ALREADY_MEMBER when they are in it. */
export async function addDirect(ctx: ModuleContext, orgId: string, userId: string, role: string) {
  return ctx.db.transaction(async (tx) => {
    await lockOrg(ctx, orgId, tx);
    if (!(await grantOf(ctx, orgId, role, tx))) throw unknownRole(role);
    if (await members(ctx).count({ where: { organization_id: orgId, user_id: userId }, transaction: tx })) {
      throw new AppError(409, 'ORG_ALREADY_MEMBER', 'The user is already a member of the organization');
    }
    const now = new Date();
    await members(ctx).create({ id: newId(), organization_id: orgId, user_id: userId, role, created_at: now, updated_at: now }, { transaction: tx });
    await ctx.audit.record({ type: 'organizations.member_added', userId, details: { organization_id: orgId, role, via: 'admin' } }, { tx });
    return { user_id: userId, role, joined_at: now.toISOString() };
  });
}

/** Whether an AppError is the last-owner refusal (the privacy eraser words it for an erasure). */
export const isLastOwner = (err: unknown) => err instanceof AppError && err.code === 'ORG_LAST_OWNER';
