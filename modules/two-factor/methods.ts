import { randomUUID } from 'node:crypto';
import { badRequest, maskEmail, maskPhone, notFound, type ModuleContext, type UserRecord } from '../../src/module-api.js';
import { PRIMARY_KINDS } from './settings.js';
import { store, type MethodKind, type MethodRow } from './store.js';
import { withUserLock } from './user-lock.js';

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : null);

export function maskIdentifier(m: Pick<MethodRow, 'kind' | 'identifier'>): string | null {
  if (!m.identifier) return null;
  return m.kind === 'email' ? maskEmail(m.identifier) : maskPhone(m.identifier);
}

export const LABELS: Record<MethodKind, string> = { email: 'Email', sms: 'SMS', totp: 'Authenticator app', backup_codes: 'Backup codes' };

/** A method as the client reads it: never a secret, the address masked. */
export async function methodView(ctx: ModuleContext, m: MethodRow) {
  const metadata: Record<string, unknown> = { label: LABELS[m.kind] };
  if (m.kind === 'backup_codes') metadata.remaining = await store.unusedBackupCodes(ctx, m.id);
  return {
    id: m.id,
    method: m.kind,
    type: m.kind,
    status: m.status,
    identifier: maskIdentifier(m),
    created_at: iso(m.created_at),
    verified_at: iso(m.verified_at),
    last_used_at: iso(m.last_used_at),
    metadata,
  };
}
export type MethodView = Awaited<ReturnType<typeof methodView>>;

export const views = (ctx: ModuleContext, rows: MethodRow[]) => Promise.all(rows.map((m) => methodView(ctx, m)));

export const isActive = (m: MethodRow) => m.status === 'active';
export const isPrimary = (m: MethodRow) => isActive(m) && PRIMARY_KINDS.includes(m.kind);

export async function activeMethods(ctx: ModuleContext, userId: string): Promise<MethodRow[]> {
  return (await store.methods(ctx, userId)).filter(isActive);
}

/**
 * The methods a pending session is offered. A user with 2FA on but no method of their own (an admin
 * turned it on) gets an emailed code to the account's address, created here (under the user's lock, so
 * two sign-ins at once make one): never no second step.
 */
export async function loginMethods(ctx: ModuleContext, user: UserRecord): Promise<MethodRow[]> {
  const active = await activeMethods(ctx, user.id);
  if (active.some(isPrimary) || !user.email) return active;
  const email = user.email.toLowerCase();
  await withUserLock(ctx, user.id, async (transaction) => {
    if ((await store.methods(ctx, user.id, { transaction })).some(isPrimary)) return;
    const now = new Date();
    await store.createMethod(
      ctx,
      { id: randomUUID(), user_id: user.id, kind: 'email', status: 'active', identifier: email, secret_enc: null, created_at: now, verified_at: now },
      { transaction },
    );
  });
  return activeMethods(ctx, user.id);
}

/** The user's method by id (404 for another user's or an unknown one). */
export async function ownMethod(ctx: ModuleContext, userId: string, id: string): Promise<MethodRow> {
  const m = await store.method(ctx, id);
  if (!m || m.user_id !== userId) throw notFound('Two-factor method not found', 'METHOD_NOT_FOUND');
  return m;
}

/** By id, or the user's newest method of a kind in a status. */
export async function resolveMethod(
  ctx: ModuleContext,
  userId: string,
  ref: { id?: string; kind?: MethodKind; status?: MethodRow['status'] },
): Promise<MethodRow> {
  if (ref.id) {
    const m = await ownMethod(ctx, userId, ref.id);
    if (ref.kind && m.kind !== ref.kind)
      throw badRequest(`method_id is a ${m.kind} method, not ${ref.kind}`, [{ field: 'method', message: 'does not match method_id' }]);
    return m;
  }
  if (!ref.kind) throw badRequest('method_id or method is required', [{ field: 'method_id', message: 'required' }]);
  const rows = (await store.methods(ctx, userId)).filter((m) => m.kind === ref.kind && (!ref.status || m.status === ref.status));
  const m = rows[rows.length - 1];
  if (!m) throw notFound(`No ${ref.status === 'pending_setup' ? 'pending ' : ''}${ref.kind} method is set up`, 'METHOD_NOT_FOUND');
  return m;
}
