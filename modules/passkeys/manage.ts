import { AppError, type ModuleContext, type SessionRecord, type Transaction, type UserRecord } from '../../src/module-api.js';
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

/**
 * Removes a passkey: only from a session signed in within the last 10 minutes, and never the last
 * way in (no password, no linked social account, no other passkey). The passkey count is read again
 * in the removal's transaction under the user's lock, so two removals at once cannot both pass.
 */
export async function removePasskey(ctx: ModuleContext, user: UserRecord, session: SessionRecord, id: string) {
  if (Date.now() - new Date(session.created_at).getTime() > RECENT_SIGN_IN_MS) {
    throw new AppError(403, 'RECENT_SIGN_IN_REQUIRED', 'Sign in again to remove a passkey');
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
