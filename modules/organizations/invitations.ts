import { createHmac } from 'node:crypto';
import { Op } from 'sequelize';
import { AppError, badRequest, randomToken, type ModuleContext, type SignedIn, type Transaction, type UserRecord } from '../../src/module-api.js';
import { access, findOrg, grantOf, lockOrg, mayGive, membershipOf } from './access.js';
import { orgForbidden } from './errors.js';
import { newId } from './ids.js';
import { decodeCursor, pageOf } from './page.js';
import { settings } from './settings.js';
import { invitations, members, plain, type OrgRow } from './store.js';

interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: string;
  token_hash: string;
  invited_by: string | null;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

const TOKEN_PREFIX = 'orginv';
const invalid = () => new AppError(400, 'ORG_INVITATION_INVALID', 'This invitation is not valid: it was used, revoked or has expired');
const mismatch = () => new AppError(403, 'ORG_INVITATION_MISMATCH', 'This invitation is for another email address: sign in with the invited, verified address');
const alreadyMember = () => new AppError(409, 'ORG_ALREADY_MEMBER', 'This person is already a member of the organization');

/** The token as stored: HMAC-SHA256 under the module's key, so a copy of the table opens no invitation. */
const hashOf = (ctx: ModuleContext, token: string) => createHmac('sha256', ctx.keys.derive('invitation-token')).update(token).digest('hex');

const view = (r: InvitationRow) => ({
  id: r.id,
  email: r.email,
  role: r.role,
  invited_by: r.invited_by,
  expires_at: new Date(r.expires_at).toISOString(),
  created_at: new Date(r.created_at).toISOString(),
});

const pending = (now: Date) => ({ accepted_at: null, revoked_at: null, expires_at: { [Op.gt]: now } });

/** Pending invitations of the organization with `role` (a role they name cannot be deleted). */
export const pendingWithRole = (ctx: ModuleContext, orgId: string, role: string, tx: Transaction) =>
  invitations(ctx).count({ where: { organization_id: orgId, role, ...pending(new Date()) }, transaction: tx });

/**
 * POST /auth/organizations/{id}/invitations {email, role} (members:invite): the invitation and a mail
 * with its link. At most ORGANIZATIONS_INVITE per organization per hour (RATE_LIMIT_ORGANIZATIONS_INVITE).
 */
export async function invite(ctx: ModuleContext, auth: SignedIn, ref: string, body: { email: string; role: string }) {
  const a = await access(ctx, auth, ref, 'members:invite');
  const grant = await grantOf(ctx, a.org.id, body.role);
  if (!grant) throw badRequest(`role: ${body.role} is not a role of this organization`, [{ field: 'role', message: 'is not a role of this organization' }]);
  if (!mayGive(a, body.role, grant)) throw orgForbidden(`Your role may not invite as ${body.role}`);
  return createInvitation(ctx, a.org, body, auth.user);
}

/** The invitation, its event and its mail (the API's path, and the CLI's with no inviter). */
export async function createInvitation(ctx: ModuleContext, org: OrgRow, body: { email: string; role: string }, inviter: UserRecord | null) {
  await ctx.limits.check('organizations-invite', org.id);
  const token = randomToken(TOKEN_PREFIX, 32);
  const now = new Date();
  const row: InvitationRow = {
    id: newId(),
    organization_id: org.id,
    email: body.email,
    role: body.role,
    token_hash: hashOf(ctx, token),
    invited_by: inviter?.id ?? null,
    expires_at: new Date(now.getTime() + settings(ctx).invitation_ttl * 1000),
    accepted_at: null,
    revoked_at: null,
    created_at: now,
  };
  await ctx.db.transaction(async (tx) => {
    await lockOrg(ctx, org.id, tx);
    const existing = await ctx.users.findByEmail(body.email);
    if (existing && (await membershipOf(ctx, org.id, existing.id, tx))) throw alreadyMember();
    if (await invitations(ctx).count({ where: { organization_id: org.id, email: body.email, ...pending(now) }, transaction: tx })) {
      throw new AppError(409, 'ORG_INVITATION_PENDING', 'This email already has a pending invitation: revoke it to send another');
    }
    await invitations(ctx).create({ ...row }, { transaction: tx });
    await ctx.audit.record(
      {
        type: 'organizations.invitation_created',
        userId: inviter?.id ?? null,
        details: { organization_id: org.id, invitation_id: row.id, email: body.email, role: body.role },
      },
      { tx },
    );
  });
  await sendInvitation(ctx, org, row, token, inviter?.name ?? null);
  return view(row);
}

async function sendInvitation(ctx: ModuleContext, org: OrgRow, row: InvitationRow, token: string, inviter: string | null) {
  const link = `${ctx.site.publicBaseUrl.replace(/\/+$/, '')}/invitations/${encodeURIComponent(token)}`;
  try {
    await ctx.mail.send({
      to: row.email,
      template: 'invitation',
      data: { organization: org.name, role: row.role, inviter: inviter ?? undefined, link, expires: new Date(row.expires_at).toUTCString() },
    });
  } catch (err) {
    // The invitation stands: it can be revoked and sent again.
    ctx.logger.warn({ err: (err as Error).message, invitation_id: row.id }, 'organization invitation mail not sent');
  }
}

/** GET …/invitations (members:invite): the pending ones, oldest first, keyset. */
export async function listInvitations(ctx: ModuleContext, auth: SignedIn, ref: string, q: { limit: number; cursor?: string }) {
  const a = await access(ctx, auth, ref, 'members:invite');
  const after = decodeCursor(q.cursor);
  const rows = (
    await invitations(ctx).findAll({
      where: { organization_id: a.org.id, ...pending(new Date()), ...(after ? { id: { [Op.gt]: after } } : {}) },
      order: [['id', 'ASC']],
      limit: q.limit + 1,
    })
  ).map((r) => plain<InvitationRow>(r));
  const page = pageOf(rows, q.limit, (r) => r.id);
  return { invitations: page.rows.map(view), next_cursor: page.next_cursor };
}

/** DELETE …/invitations/{invitation_id} (members:invite): its link stops working. */
export async function revokeInvitation(ctx: ModuleContext, auth: SignedIn, ref: string, invitationId: string) {
  const a = await access(ctx, auth, ref, 'members:invite');
  return ctx.db.transaction(async (tx) => {
    const [n] = await invitations(ctx).update(
      { revoked_at: new Date() },
      { where: { id: invitationId, organization_id: a.org.id, ...pending(new Date()) }, transaction: tx },
    );
    if (n !== 1) throw new AppError(404, 'ORG_INVITATION_NOT_FOUND', 'No such pending invitation in this organization');
    await ctx.audit.record(
      { type: 'organizations.invitation_revoked', userId: auth.user.id, details: { organization_id: a.org.id, invitation_id: invitationId } },
      { tx },
    );
    return { id: invitationId, revoked: true };
  });
}

/**
 * POST /auth/organizations/invitations/accept {token}: the signed-in user whose verified email is the
 * invited one joins with the invited role. Single use: the invitation is marked accepted by a
 * conditional update inside the transaction that adds the member, so of any number of accepts at once
 * exactly one joins.
 */
export async function acceptInvitation(ctx: ModuleContext, auth: SignedIn, token: string) {
  return join(ctx, auth, await openFor(ctx, auth, { token }));
}

/**
 * POST /auth/organizations/invitations/{invitation_id}/accept: the same, by the invitation's id, for the
 * user whose verified email it was sent to (the account page's list: the verified address stands for the
 * mailbox the token went to).
 */
export async function acceptInvitationById(ctx: ModuleContext, auth: SignedIn, id: string) {
  return join(ctx, auth, await openFor(ctx, auth, { id }));
}

/** GET /auth/organizations/invitations/mine: the pending invitations to the user's verified email, with their organizations. */
export async function myInvitations(ctx: ModuleContext, auth: SignedIn) {
  if (!auth.user.is_verified) return { invitations: [] };
  const rows = (await invitations(ctx).findAll({ where: { email: auth.user.email, ...pending(new Date()) }, order: [['id', 'ASC']], limit: 100 })).map((r) =>
    plain<InvitationRow>(r),
  );
  const out = [];
  for (const r of rows) {
    const org = await findOrg(ctx, r.organization_id);
    if (org)
      out.push({ id: r.id, role: r.role, expires_at: new Date(r.expires_at).toISOString(), organization: { id: org.id, slug: org.slug, name: org.name } });
  }
  return { invitations: out };
}

async function join(ctx: ModuleContext, auth: SignedIn, inv: InvitationRow) {
  const now = new Date();
  return ctx.db.transaction(async (tx) => {
    const org = await lockOrg(ctx, inv.organization_id, tx);
    if (!org) throw invalid();
    const [n] = await invitations(ctx).update({ accepted_at: now, accepted_by: auth.user.id }, { where: { id: inv.id, ...pending(now) }, transaction: tx });
    if (n !== 1) throw invalid();
    if (await membershipOf(ctx, org.id, auth.user.id, tx)) throw alreadyMember();
    if (!(await grantOf(ctx, org.id, inv.role, tx))) throw invalid();
    await members(ctx).create(
      { id: newId(), organization_id: org.id, user_id: auth.user.id, role: inv.role, created_at: now, updated_at: now },
      { transaction: tx },
    );
    await ctx.audit.record(
      { type: 'organizations.invitation_accepted', userId: auth.user.id, details: { organization_id: org.id, invitation_id: inv.id, role: inv.role } },
      { tx },
    );
    await ctx.audit.record(
      { type: 'organizations.member_added', userId: auth.user.id, details: { organization_id: org.id, role: inv.role, via: 'invitation' } },
      { tx },
    );
    return { organization: { id: org.id, slug: org.slug, name: org.name }, role: inv.role };
  });
}

/**
 * The pending invitation of `token` for the signed-in user, with accept's checks and answers (counted in
 * `organizations-accept`): 400 ORG_INVITATION_INVALID when unknown, used, revoked or expired, 403
 * ORG_INVITATION_MISMATCH when it is for another (or an unverified) email.
 */
async function openFor(ctx: ModuleContext, auth: SignedIn, by: { token: string } | { id: string }): Promise<InvitationRow> {
  await ctx.limits.check('organizations-accept', auth.user.id);
  const where =
    'token' in by ? (by.token.startsWith(`${TOKEN_PREFIX}_`) ? { token_hash: hashOf(ctx, by.token) } : null) : { id: by.id, email: auth.user.email };
  const found = where ? await invitations(ctx).findOne({ where }) : null;
  const inv = found ? plain<InvitationRow>(found) : null;
  if (!inv || inv.accepted_at || inv.revoked_at || new Date(inv.expires_at) <= new Date()) throw invalid();
  if (!auth.user.is_verified || auth.user.email !== inv.email) throw mismatch();
  return inv;
}

/**
 * POST /auth/organizations/invitations/preview {token}: what accepting would do (the organization and
 * the role), for the invited, verified user only; the same refusals as accept, so it tells no more.
 */
export async function previewInvitation(ctx: ModuleContext, auth: SignedIn, token: string) {
  const inv = await openFor(ctx, auth, { token });
  const org = await findOrg(ctx, inv.organization_id);
  if (!org) throw invalid();
  return { organization: { id: org.id, slug: org.slug, name: org.name }, role: inv.role, expires_at: new Date(inv.expires_at).toISOString() };
}
