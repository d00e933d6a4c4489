import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import {
  AppError,
  forbidden,
  notFound,
  type ModuleContext,
  type SessionRecord,
  type SignInClient,
  type Transaction,
  type UserRecord,
} from '../../src/module-api.js';
import { checkAssertion, userOptions } from './login.js';
import { row, store, view } from './store.js';

/** How recent a sign-in must be to remove a passkey (the session's creation). */
export const RECENT_SIGN_IN_MS = 10 * 60_000;

export async function listPasskeys(ctx: ModuleContext, userId: string) {
  const rows = await store(ctx).Credential.findAll({ where: { user_id: userId }, order: [['created_at', 'ASC']] });
  return rows.map((r) => view(row(r)));
}

async function own(ctx: ModuleContext, userId: string, id: string, tx?: Transaction) {
  const found = await store(ctx).Credential.findOne({ where: { id, user_id: userId }, transaction: tx });
  if (!found) throw new AppError(404, 'PASSKEY_NOT_FOUND', 'Passkey not found');
  return found;
}

export async function renamePasskey(ctx: ModuleContext, userId: string, id: string, name: string) {
  return ctx.db.transaction(async (tx) => {
    const found = await own(ctx, userId, id, tx);
    await found.update({ name }, { transaction: tx });
    await ctx.audit.record({ type: 'passkeys.renamed', userId, details: { passkey_id: id, name } }, { tx });
    return view(row(found));
  });
}

/** Request options for proving one's own passkey before removing it (POST /auth/passkeys/:id/remove/options). */
export async function removalOptions(ctx: ModuleContext, userId: string, id: string) {
  const found = await own(ctx, userId, id);
  return userOptions(ctx, userId, 'remove', { only: [row(found)] });
}

/**
 * Removes a passkey: only from a session signed in within the last 10 minutes or with a fresh assertion
 * of that very passkey (`proof`, over a challenge from its remove options), and never the last way in
 * (no password, no linked social account, no other passkey). The passkey count is read again in the
 * removal's transaction under the user's lock, so two removals at once cannot both pass.
 */
export async function removePasskey(
  ctx: ModuleContext,
  user: UserRecord,
  session: SessionRecord,
  id: string,
  proof?: { credential: AuthenticationResponseJSON; client: SignInClient },
) {
  if (proof) {
    await own(ctx, user.id, id);
    await checkAssertion(ctx, proof.credential, { purpose: 'remove', userId: user.id, passkeyId: id, client: proof.client });
  } else if (Date.now() - new Date(session.created_at).getTime() > RECENT_SIGN_IN_MS) {
    throw new AppError(403, 'RECENT_SIGN_IN_REQUIRED', 'Sign in again, or prove the passkey, to remove it');
  }
  const ways = await ctx.users.waysIn(user.id);
  await ctx.db.transaction(async (tx) => {
    if (ctx.db.dialect === 'postgres') await ctx.db.exec('SELECT pg_advisory_xact_lock(hashtext(?))', [`passkeys:${user.id}`], { tx });
    const found = await own(ctx, user.id, id, tx);
    const others = await store(ctx).Credential.count({ where: { user_id: user.id }, transaction: tx });
    if (!ways.password && ways.social === 0 && others <= 1) {
      throw new AppError(409, 'LAST_SIGN_IN_METHOD', 'This passkey is the last way into the account: add a password or another passkey first');
    }
    const r = row(found);
    await found.destroy({ transaction: tx });
    await ctx.audit.record({ type: 'passkeys.removed', userId: user.id, details: { passkey_id: r.id, name: r.name } }, { tx });
  });
}

/** An admin's view of a user's passkeys (GET /auth/admin/users/:user_id/passkeys). */
export async function adminList(ctx: ModuleContext, userId: string) {
  const target = await ctx.users.find(userId);
  if (!target) throw notFound('User not found');
  return listPasskeys(ctx, userId);
}

/**
 * An admin removes a user's passkey (a lost or compromised authenticator): no recency or last-way rule
 * (the user gets back in by resetting their password), written as `passkeys.removed` with the admin as
 * actor (`details.by_admin`), which mails the user. Only a superadmin acts on a superadmin.
 */
export async function adminRemove(ctx: ModuleContext, admin: UserRecord, userId: string, id: string) {
  const target = await ctx.users.find(userId);
  if (!target) throw notFound('User not found');
  if (target.user_type === 'superadmin' && admin.user_type !== 'superadmin') throw forbidden('Only a superadmin can change a superadmin');
  await ctx.db.transaction(async (tx) => {
    const found = await own(ctx, userId, id, tx);
    const r = row(found);
    await found.destroy({ transaction: tx });
    await ctx.audit.record({ type: 'passkeys.removed', userId, details: { passkey_id: r.id, name: r.name, by_admin: true } }, { tx });
  });
}
