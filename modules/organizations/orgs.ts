import { randomBytes } from 'node:crypto';
import { Op } from 'sequelize';
import { isUniqueViolation, type ModuleContext, type SignedIn, type Transaction } from '../../src/module-api.js';
import { access, isSuperadmin, lockOrg } from './access.js';
import { orgForbidden, slugTaken } from './errors.js';
import { newId } from './ids.js';
import { slugFromName } from './input.js';
import { decodeCursor, pageOf } from './page.js';
import { settings } from './settings.js';
import { members, orgs, orgView, plain, type MemberRow, type OrgRow } from './store.js';

export type OrgView = ReturnType<typeof orgView>;

/** Whether the caller may create organizations (ORGANIZATIONS_CREATE: anyone, or admin and superadmin user types). */
function mayCreate(ctx: ModuleContext, userType: string): boolean {
  return settings(ctx).create === 'anyone' || userType === 'admin' || userType === 'superadmin';
}

/** POST /auth/organizations: the organization, its creator its owner, in one transaction. */
export async function createOrg(ctx: ModuleContext, auth: SignedIn, body: { name: string; slug?: string }): Promise<OrgView> {
  if (!mayCreate(ctx, auth.user.user_type)) throw orgForbidden('Only administrators may create organizations here');
  return insertOrg(ctx, auth.user.id, body);
}

/** A new organization with `ownerId` its owner (the API's creator, or the user the CLI names). */
export async function insertOrg(ctx: ModuleContext, ownerId: string, body: { name: string; slug?: string }): Promise<OrgView> {
  const chosen = body.slug;
  // A slug made from the name gets a short suffix when taken (a few tries); a chosen one is the caller's to change.
  const candidates = chosen
    ? [chosen]
    : [slugFromName(body.name), ...Array.from({ length: 4 }, () => `${slugFromName(body.name) ?? 'org'}-${randomBytes(3).toString('hex')}`)].filter(
        (s): s is string => Boolean(s),
      );
  for (const slug of candidates) {
    try {
      return await ctx.db.transaction(async (tx) => {
        const now = new Date();
        const org = { id: newId(), slug, name: body.name, logo: null, metadata: {}, created_at: now, updated_at: now };
        await orgs(ctx).create(org, { transaction: tx });
        await members(ctx).create(
          { id: newId(), organization_id: org.id, user_id: ownerId, role: 'owner', created_at: now, updated_at: now },
          { transaction: tx },
        );
        await ctx.audit.record({ type: 'organizations.created', userId: ownerId, details: { organization_id: org.id, slug, name: body.name } }, { tx });
        await ctx.audit.record(
          { type: 'organizations.member_added', userId: ownerId, details: { organization_id: org.id, role: 'owner', via: 'created' } },
          { tx },
        );
        return orgView(org);
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
  throw slugTaken();
}

/** GET /auth/organizations: the caller's organizations (keyset by id), each with the caller's role. */
export async function listMine(ctx: ModuleContext, userId: string, q: { limit: number; cursor?: string }) {
  const after = decodeCursor(q.cursor);
  const rows = (
    await members(ctx).findAll({
      where: { user_id: userId, ...(after ? { organization_id: { [Op.gt]: after } } : {}) },
      order: [['organization_id', 'ASC']],
      limit: q.limit + 1,
    })
  ).map((m) => plain<MemberRow>(m));
  const page = pageOf(rows, q.limit, (r) => r.organization_id);
  const found = (await orgs(ctx).findAll({ where: { id: page.rows.map((r) => r.organization_id) } })).map((o) => plain<OrgRow>(o));
  const byId = new Map(found.map((o) => [o.id, o]));
  const organizations = page.rows.flatMap((m) => {
    const o = byId.get(m.organization_id);
    return o ? [{ ...orgView(o), role: m.role, joined_at: new Date(m.created_at).toISOString() }] : [];
  });
  return { organizations, next_cursor: page.next_cursor };
}

/** GET /auth/organizations/{id}: the organization with the caller's role (null for a superadmin who is not a member). */
export async function getOrg(ctx: ModuleContext, auth: SignedIn, ref: string) {
  const a = await access(ctx, auth, ref);
  return { ...orgView(a.org), role: a.membership?.role ?? null };
}

/** PATCH /auth/organizations/{id} (org:update). */
export async function updateOrg(
  ctx: ModuleContext,
  auth: SignedIn,
  ref: string,
  body: { name?: string; slug?: string; logo?: string | null; metadata?: Record<string, unknown> },
): Promise<OrgView> {
  const a = await access(ctx, auth, ref, 'org:update');
  try {
    return await ctx.db.transaction(async (tx) => {
      const current = await lockOrg(ctx, a.org.id, tx);
      if (!current) throw orgForbidden();
      const changed = Object.keys(body).filter((k) => JSON.stringify(body[k as keyof typeof body]) !== JSON.stringify(current[k as keyof OrgRow]));
      const next = { ...current, ...body, updated_at: new Date() };
      await orgs(ctx).update({ ...body, updated_at: next.updated_at }, { where: { id: a.org.id }, transaction: tx });
      await ctx.audit.record(
        {
          type: 'organizations.updated',
          userId: auth.user.id,
          details: {
            organization_id: a.org.id,
            fields: changed,
            ...(body.slug && body.slug !== current.slug ? { slug: body.slug, previous_slug: current.slug } : {}),
          },
        },
        { tx },
      );
      return orgView(next);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw slugTaken();
    throw err;
  }
}

/** DELETE /auth/organizations/{id} (org:delete): its members, roles and invitations go with it. */
export async function deleteOrg(ctx: ModuleContext, auth: SignedIn, ref: string): Promise<{ id: string; slug: string }> {
  const a = await access(ctx, auth, ref, 'org:delete');
  await removeOrg(ctx, a.org, { actor: auth.user.id, superadmin: isSuperadmin(auth.user) });
  return { id: a.org.id, slug: a.org.slug };
}

/** Deletes an organization and everything in it (the foreign keys cascade), with its audit event, in `tx` when given. */
export async function removeOrg(
  ctx: ModuleContext,
  org: Pick<OrgRow, 'id' | 'slug' | 'name'>,
  who: { actor: string | null; superadmin?: boolean; reason?: string },
  tx?: Transaction,
) {
  const run = async (t: Transaction) => {
    const count = await members(ctx).count({ where: { organization_id: org.id }, transaction: t });
    // Explicit deletes as well as the cascade: SQLite enforces foreign keys only where they are switched on.
    await ctx.db.exec('DELETE FROM organization_invitations WHERE organization_id = ?', [org.id], { tx: t });
    await ctx.db.exec('DELETE FROM organization_roles WHERE organization_id = ?', [org.id], { tx: t });
    await ctx.db.exec('DELETE FROM organization_members WHERE organization_id = ?', [org.id], { tx: t });
    await ctx.db.exec('DELETE FROM organizations WHERE id = ?', [org.id], { tx: t });
    await ctx.audit.record(
      {
        type: 'organizations.deleted',
        userId: who.actor,
        details: {
          organization_id: org.id,
          slug: org.slug,
          name: org.name,
          members: count,
          ...(who.superadmin ? { by: 'superadmin' } : {}),
          ...(who.reason ? { reason: who.reason } : {}),
        },
      },
      { tx: t },
    );
  };
  if (tx) await run(tx);
  else await ctx.db.transaction(run);
}
