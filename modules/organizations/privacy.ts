import { AppError, type ModuleContext, type Transaction } from '../../src/module-api.js';
import { lockOrg } from './access.js';
import { removeOrg } from './orgs.js';
import { invitations, members, orgs, plain, type MemberRow, type OrgRow } from './store.js';

/** Export: the user's memberships and the invitations addressed to their email. */
export async function exportOrganizations({ ctx, userId }: { ctx: ModuleContext; userId: string }) {
  const user = await ctx.users.find(userId, { includeDeleted: true });
  const rows = (await members(ctx).findAll({ where: { user_id: userId }, order: [['id', 'ASC']] })).map((m) => plain<MemberRow>(m));
  const byId = new Map(
    (await orgs(ctx).findAll({ where: { id: rows.map((r) => r.organization_id) } })).map((o) => {
      const org = plain<OrgRow>(o);
      return [org.id, org];
    }),
  );
  const invited = user?.email
    ? (await invitations(ctx).findAll({ where: { email: user.email }, order: [['id', 'ASC']] })).map((i) => i.get({ plain: true }) as Record<string, unknown>)
    : [];
  if (!rows.length && !invited.length) return null;
  const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);
  return {
    memberships: rows.map((m) => ({
      organization_id: m.organization_id,
      slug: byId.get(m.organization_id)?.slug ?? null,
      name: byId.get(m.organization_id)?.name ?? null,
      role: m.role,
      joined_at: iso(m.created_at),
    })),
    invitations: invited.map((i) => ({
      organization_id: i.organization_id,
      role: i.role,
      created_at: iso(i.created_at),
      expires_at: iso(i.expires_at),
      accepted_at: iso(i.accepted_at),
      revoked_at: iso(i.revoked_at),
    })),
  };
}

/**
 * Erasure, inside its transaction: the user's memberships go, and the invitations to their address. An
 * organization the user alone owns is refused with a clear message while others are in it (ownership must
 * move first); when they are its only member, the organization goes too.
 */
export async function eraseOrganizations({ ctx, userId, tx }: { ctx: ModuleContext; userId: string; tx: Transaction }) {
  const mine = (await members(ctx).findAll({ where: { user_id: userId }, transaction: tx })).map((m) => plain<MemberRow>(m));
  for (const m of mine) {
    const org = await lockOrg(ctx, m.organization_id, tx);
    if (!org) continue;
    if (m.role === 'owner') {
      const owners = await members(ctx).count({ where: { organization_id: org.id, role: 'owner' }, transaction: tx });
      const everyone = await members(ctx).count({ where: { organization_id: org.id }, transaction: tx });
      if (owners <= 1 && everyone > 1) {
        throw new AppError(
          409,
          'ORG_LAST_OWNER',
          `The account is the only owner of the organization ${org.name} (${org.slug}), which has other members: make one of them owner before erasing the account`,
        );
      }
      if (owners <= 1) {
        await removeOrg(ctx, org, { actor: null, reason: 'owner_erased' }, tx);
        continue;
      }
    }
    await members(ctx).destroy({ where: { id: m.id }, transaction: tx });
    await ctx.audit.record({ type: 'organizations.member_removed', userId, details: { organization_id: org.id, role: m.role, reason: 'erased' } }, { tx });
  }
  const user = await ctx.users.find(userId, { includeDeleted: true, tx });
  if (user?.email) await invitations(ctx).destroy({ where: { email: user.email }, transaction: tx });
  await invitations(ctx).update({ invited_by: null }, { where: { invited_by: userId }, transaction: tx });
  await invitations(ctx).update({ accepted_by: null }, { where: { accepted_by: userId }, transaction: tx });
}
