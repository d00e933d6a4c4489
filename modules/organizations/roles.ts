import { Op } from 'sequelize';
import { AppError, isUniqueViolation, type ModuleContext, type SignedIn } from '../../src/module-api.js';
import { access, lockOrg } from './access.js';
import { pendingWithRole } from './invitations.js';
import { orgForbidden } from './errors.js';
import { newId } from './ids.js';
import { BUILT_IN_GRANTS, BUILT_IN_ROLES, covers, customGrant, isBuiltIn, listed } from './permissions.js';
import { jsonOf, members, plain, roles } from './store.js';

interface RoleRow {
  id: string;
  name: string;
  permissions: unknown;
  created_at: Date;
  updated_at: Date;
}

const roleExists = () => new AppError(409, 'ORG_ROLE_EXISTS', 'The organization already has a role of this name', [{ field: 'name', message: 'is taken' }]);
const builtIn = (name: string) => new AppError(409, 'ORG_ROLE_BUILT_IN', `${name} is a built-in role: it cannot be changed or deleted`);
const roleNotFound = () => new AppError(404, 'ORG_ROLE_NOT_FOUND', 'No such role in this organization');
const roleInUse = (n: number) => new AppError(409, 'ORG_ROLE_IN_USE', `${n} member(s) or pending invitation(s) have this role: give them another first`);

const view = (r: RoleRow) => ({
  name: r.name,
  built_in: false,
  permissions: jsonOf<string[]>(r.permissions, []),
  created_at: new Date(r.created_at).toISOString(),
  updated_at: new Date(r.updated_at).toISOString(),
});

/** GET /auth/organizations/{id}/roles: the built-in roles, then the organization's own (any member may read them). */
export async function listRoles(ctx: ModuleContext, auth: SignedIn, ref: string) {
  const a = await access(ctx, auth, ref);
  const own = (await roles(ctx).findAll({ where: { organization_id: a.org.id }, order: [['name', 'ASC']] })).map((r) => view(plain<RoleRow>(r)));
  const builtIns = BUILT_IN_ROLES.map((name) => ({ name, built_in: true, permissions: listed(BUILT_IN_GRANTS[name]), created_at: null, updated_at: null }));
  return { roles: [...builtIns, ...own] };
}

/** A role may grant only what the caller holds: roles:manage is no way around members:update_role's rule. */
function assertCovered(a: Awaited<ReturnType<typeof access>>, permissions: string[]) {
  if (!covers(a.grant, customGrant(permissions))) throw orgForbidden('A role may not grant permissions your own role lacks');
}

export async function createRole(ctx: ModuleContext, auth: SignedIn, ref: string, body: { name: string; permissions: string[] }) {
  const a = await access(ctx, auth, ref, 'roles:manage');
  if (isBuiltIn(body.name)) throw roleExists();
  assertCovered(a, body.permissions);
  const now = new Date();
  const row = { id: newId(), organization_id: a.org.id, name: body.name, permissions: body.permissions, created_at: now, updated_at: now };
  try {
    await ctx.db.transaction(async (tx) => {
      await roles(ctx).create(row, { transaction: tx });
      await ctx.audit.record(
        { type: 'organizations.role_created', userId: auth.user.id, details: { organization_id: a.org.id, role: body.name, permissions: body.permissions } },
        { tx },
      );
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw roleExists();
    throw err;
  }
  return view(row);
}

export async function updateRole(ctx: ModuleContext, auth: SignedIn, ref: string, name: string, permissions: string[]) {
  const a = await access(ctx, auth, ref, 'roles:manage');
  if (isBuiltIn(name)) throw builtIn(name);
  assertCovered(a, permissions);
  return ctx.db.transaction(async (tx) => {
    await lockOrg(ctx, a.org.id, tx);
    const row = await roles(ctx).findOne({ where: { organization_id: a.org.id, name }, transaction: tx });
    if (!row) throw roleNotFound();
    const before = plain<RoleRow>(row);
    // Changing a role changes what its holders may do: the caller must hold its present grant as well.
    assertCovered(a, jsonOf<string[]>(before.permissions, []));
    const now = new Date();
    await roles(ctx).update({ permissions, updated_at: now }, { where: { id: before.id }, transaction: tx });
    await ctx.audit.record(
      {
        type: 'organizations.role_updated',
        userId: auth.user.id,
        details: { organization_id: a.org.id, role: name, permissions, previous_permissions: jsonOf(before.permissions, []) },
      },
      { tx },
    );
    return view({ ...before, permissions, updated_at: now });
  });
}

/** DELETE …/roles/{name}: refused (409 ORG_ROLE_IN_USE) while a member or a pending invitation has it, decided under the organization's lock. */
export async function deleteRole(ctx: ModuleContext, auth: SignedIn, ref: string, name: string) {
  const a = await access(ctx, auth, ref, 'roles:manage');
  if (isBuiltIn(name)) throw builtIn(name);
  return ctx.db.transaction(async (tx) => {
    await lockOrg(ctx, a.org.id, tx);
    const row = await roles(ctx).findOne({ where: { organization_id: a.org.id, name }, transaction: tx });
    if (!row) throw roleNotFound();
    assertCovered(a, jsonOf<string[]>(row.get('permissions'), []));
    const holders = await members(ctx).count({ where: { organization_id: a.org.id, role: name }, transaction: tx });
    const invited = await pendingWithRole(ctx, a.org.id, name, tx);
    if (holders + invited > 0) throw roleInUse(holders + invited);
    await roles(ctx).destroy({ where: { id: row.get('id') as string, organization_id: { [Op.eq]: a.org.id } }, transaction: tx });
    await ctx.audit.record({ type: 'organizations.role_deleted', userId: auth.user.id, details: { organization_id: a.org.id, role: name } }, { tx });
    return { name, deleted: true };
  });
}
