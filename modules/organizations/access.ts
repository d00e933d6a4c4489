import { Op } from 'sequelize';
import type { ModuleContext, SignedIn, Transaction, UserRecord } from '../../src/module-api.js';
import { orgForbidden, orgNotFound } from './errors.js';
import { UUID_RE } from './ids.js';
import { ALL, allows, BUILT_IN_GRANTS, covers, customGrant, isBuiltIn, type Grant } from './permissions.js';
import { jsonOf, members, orgs, plain, roles, type MemberRow, type OrgRow } from './store.js';

/** Who is asking, in one organization: their membership (none for a superadmin who is not a member) and what it grants. */
export interface Access {
  org: OrgRow;
  user: UserRecord;
  membership: MemberRow | null;
  grant: Grant;
  /** A superadmin: everything an owner may, in any organization. */
  superadmin: boolean;
}

export const isSuperadmin = (user: Pick<UserRecord, 'user_type'>) => user.user_type === 'superadmin';

/** An organization by id or slug (either is accepted wherever `{id}` is), or null. */
export async function findOrg(ctx: ModuleContext, ref: string, tx?: Transaction): Promise<OrgRow | null> {
  const where = UUID_RE.test(ref) ? { [Op.or]: [{ id: ref }, { slug: ref }] } : { slug: ref };
  const row = await orgs(ctx).findOne({ where, transaction: tx });
  return row ? plain<OrgRow>(row) : null;
}

/** What a role of the organization grants; null for a role it does not have. */
export async function grantOf(ctx: ModuleContext, orgId: string, role: string, tx?: Transaction): Promise<Grant | null> {
  if (isBuiltIn(role)) return BUILT_IN_GRANTS[role];
  const row = await roles(ctx).findOne({ where: { organization_id: orgId, name: role }, transaction: tx });
  return row ? customGrant(jsonOf<string[]>(row.get('permissions'), [])) : null;
}

export async function membershipOf(ctx: ModuleContext, orgId: string, userId: string, tx?: Transaction): Promise<MemberRow | null> {
  const row = await members(ctx).findOne({ where: { organization_id: orgId, user_id: userId }, transaction: tx });
  return row ? plain<MemberRow>(row) : null;
}

/**
 * The caller's access to the organization `ref`, needing `permission` when given. A non-member gets
 * 403 ORG_FORBIDDEN whether or not the organization exists (no probing for names); only a
 * superadmin learns 404 ORG_NOT_FOUND.
 */
export async function access(ctx: ModuleContext, auth: SignedIn, ref: string, permission?: string): Promise<Access> {
  const user = auth.user;
  const org = await findOrg(ctx, ref);
  const superadmin = isSuperadmin(user);
  if (!org) throw superadmin ? orgNotFound() : orgForbidden();
  const membership = await membershipOf(ctx, org.id, user.id);
  if (!membership && !superadmin) throw orgForbidden();
  const grant = superadmin ? ALL : ((membership && (await grantOf(ctx, org.id, membership.role))) ?? BUILT_IN_GRANTS.member);
  if (permission && !allows(grant, permission)) throw orgForbidden(`Your role in this organization lacks ${permission}`);
  return { org, user, membership, grant, superadmin };
}

/** Whether the caller may give (or take away) `role`: only owners (and superadmins) deal in owner, and no one gives more than they hold. */
export function mayGive(a: Access, role: string, grant: Grant): boolean {
  if (a.superadmin || a.membership?.role === 'owner') return true;
  if (role === 'owner') return false;
  return covers(a.grant, grant);
}

/**
 * Locks the organization's row for the rest of the transaction (PostgreSQL FOR UPDATE; SQLite's
 * transactions are IMMEDIATE and write one at a time): membership changes of one organization go one
 * after the other, so the owner count each one reads is the one it changes.
 */
export async function lockOrg(ctx: ModuleContext, orgId: string, tx: Transaction): Promise<OrgRow | null> {
  const row = await orgs(ctx).findOne({ where: { id: orgId }, transaction: tx, lock: true });
  return row ? plain<OrgRow>(row) : null;
}
