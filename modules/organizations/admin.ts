import { z } from 'zod';
import { defineRoute, moduleEnvelope, type ModuleContext } from '../../src/module-api.js';
import { findOrg } from './access.js';
import { orgNotFound } from './errors.js';
import { orgParams } from './input.js';
import { decodeCursor, pageOf, pageQuery } from './page.js';
import { orgView, type OrgRow } from './store.js';

const MODULE = 'organizations';
const ADMINS = { roles: ['admin', 'superadmin'] } as const;

/** `q`: a part of the name (any case) or of the slug. */
const listQuery = z.object({ ...pageQuery, q: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional() });

/** A LIKE pattern matching `s` anywhere; `!` escapes (the module SQL guard refuses backslashes). */
const likePart = (s: string) => `%${s.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;

async function memberCounts(ctx: ModuleContext, ids: string[]): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const rows = await ctx.db.select<{ organization_id: string; n: number | string }>(
    'SELECT organization_id, COUNT(*) AS n FROM organization_members WHERE organization_id IN (?) GROUP BY organization_id',
    [ids],
  );
  return new Map(rows.map((r) => [r.organization_id, Number(r.n)]));
}

/** Every organization, newest first, keyset by id; `q` searches name and slug. */
export async function adminList(ctx: ModuleContext, q: z.output<typeof listQuery>) {
  const before = decodeCursor(q.cursor);
  const where: string[] = [];
  const params: unknown[] = [];
  if (q.q) {
    where.push("(LOWER(name) LIKE ? ESCAPE '!' OR slug LIKE ? ESCAPE '!')");
    params.push(likePart(q.q), likePart(q.q));
  }
  if (before) {
    where.push('id < ?');
    params.push(before);
  }
  const rows = await ctx.db.select<OrgRow>(
    `SELECT id, slug, name, logo, metadata, created_at, updated_at FROM organizations${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`,
    [...params, q.limit + 1],
  );
  const page = pageOf(rows, q.limit, (r) => r.id);
  const counts = await memberCounts(
    ctx,
    page.rows.map((r) => r.id),
  );
  return { organizations: page.rows.map((o) => ({ ...orgView(o), member_count: counts.get(o.id) ?? 0 })), next_cursor: page.next_cursor };
}

/** One organization with its member count and owners. */
export async function adminShow(ctx: ModuleContext, ref: string) {
  const org = await findOrg(ctx, ref);
  if (!org) throw orgNotFound();
  const counts = await memberCounts(ctx, [org.id]);
  const ownerRows = await ctx.db.select<{ user_id: string }>(
    "SELECT user_id FROM organization_members WHERE organization_id = ? AND role = 'owner' ORDER BY id",
    [org.id],
  );
  const users = await ctx.users.findMany(ownerRows.map((r) => r.user_id));
  return { ...orgView(org), member_count: counts.get(org.id) ?? 0, owners: users.map((u) => ({ user_id: u.id, email: u.email, name: u.name ?? null })) };
}

export const adminListRoute = defineRoute({
  method: 'get',
  path: '/auth/admin/organizations',
  summary: 'Every organization, searchable by name or slug (admin)',
  auth: ADMINS,
  module: MODULE,
  rateLimit: 'admin',
  query: listQuery,
  handler: async ({ ctx, auth, query }) => moduleEnvelope(await adminList(ctx, query), auth),
});

export const adminShowRoute = defineRoute({
  method: 'get',
  path: '/auth/admin/organizations/:id',
  summary: 'One organization with its member count (admin)',
  auth: ADMINS,
  module: MODULE,
  rateLimit: 'admin',
  params: orgParams,
  handler: async ({ ctx, auth, params }) => moduleEnvelope({ organization: await adminShow(ctx, params.id) }, auth),
});

/** An organization's members (first 200 by join order) with their emails and names, for the console. */
export async function adminMembers(ctx: ModuleContext, ref: string) {
  const org = await findOrg(ctx, ref);
  if (!org) throw orgNotFound();
  const rows = await ctx.db.select<{ user_id: string; role: string; created_at: string | Date }>(
    'SELECT user_id, role, created_at FROM organization_members WHERE organization_id = ? ORDER BY id LIMIT 200',
    [org.id],
  );
  const users = new Map((await ctx.users.findMany(rows.map((r) => r.user_id))).map((u) => [u.id, u]));
  return {
    members: rows.map((r) => ({
      user_id: r.user_id,
      email: users.get(r.user_id)?.email ?? null,
      name: users.get(r.user_id)?.name ?? null,
      role: r.role,
      joined_at: new Date(r.created_at).toISOString(),
    })),
  };
}

export const adminMembersRoute = defineRoute({
  method: 'get',
  path: '/auth/admin/organizations/:id/members',
  summary: "An organization's members with their emails (admin; the first 200)",
  auth: ADMINS,
  module: MODULE,
  rateLimit: 'admin',
  params: orgParams,
  handler: async ({ ctx, auth, params }) => moduleEnvelope(await adminMembers(ctx, params.id), auth),
});

export const adminRoutes = [adminListRoute, adminShowRoute, adminMembersRoute];
