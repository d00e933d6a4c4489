import {
  AppError,
  type ModuleCommand,
  type ModuleContext,
  type ModuleUninstallGuard,
  type Transaction,
  type TwoFactorMethodsPayload,
} from '../../src/module-api.js';
import { writeTwoFactorFlag } from './two-factor-flag.js';
import { isTrusted, listDevices } from './devices.js';
import { extraMethods, extraView } from './extra.js';
import { loginMethods, maskIdentifier, views } from './methods.js';
import { resetUser } from './service.js';
import { store } from './store.js';

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/**
 * 'auth.two_factor.methods': at every sign-in of a user with 2FA on (password, token, social), and on
 * the pending current-user reads. Says the factor is provided (core refuses sign-in when nobody does),
 * skips it for a trusted device, and lists the methods the pending session may use.
 */
export async function onSecondFactor(p: TwoFactorMethodsPayload, ctx: ModuleContext): Promise<void> {
  p.provided = true;
  if (!p.user?.two_factor) return;
  if (p.client?.trustedDevice && (await isTrusted(ctx, p.user, p.client.trustedDevice))) {
    p.trusted = true;
    return;
  }
  const rows = await loginMethods(ctx, p.user);
  for (const v of await views(ctx, rows))
    p.methods.push({ id: v.id, method: v.method, type: v.method, status: v.status, identifier: v.identifier, metadata: v.metadata });
  for (const v of (await extraMethods(ctx, p.user)).map(extraView))
    p.methods.push({ id: v.id, method: v.method, type: v.type, status: v.status, identifier: v.identifier, metadata: v.metadata });
}

/** Uninstalling while users rely on 2FA would lock them out (logins answer 503): refused unless forced. */
export const uninstallGuard: ModuleUninstallGuard = async ({ ctx, force, tx }) => {
  const ids = await ctx.users.idsWhere({ two_factor: true }, { tx: tx });
  if (!ids.length) return;
  if (!force) {
    throw new AppError(
      409,
      'TWO_FACTOR_IN_USE',
      `${ids.length} user${ids.length === 1 ? ' has' : 's have'} two-factor authentication on; uninstalling would stop their sign-ins. Uninstall with force to turn it off for them`,
      undefined,
      { users_with_two_factor: ids.length },
    );
  }
  // users.setTwoFactor: the caches and 'user.updated' follow the uninstall's commit.
  await writeTwoFactorFlag(ctx, ids, false, tx);
  // Each user's second factor went with the uninstall: one event each, committed with it (actor: the operator).
  for (const userId of ids) await ctx.audit.record({ type: 'two_factor.disabled', userId, details: { reason: 'module_uninstalled' } }, { tx });
  return { notices: [`Two-factor authentication was turned off for ${ids.length} user${ids.length === 1 ? '' : 's'}`] };
};

/** The privacy export: methods (kind, masked address, dates), trusted devices, how many backup codes are left. Never secrets or codes. */
export async function exportTwoFactor({ ctx, userId }: { ctx: ModuleContext; userId: string }) {
  const rows = await store.methods(ctx, userId);
  const methods = await Promise.all(
    rows.map(async (m) => ({
      id: m.id,
      method: m.kind,
      status: m.status,
      identifier: maskIdentifier(m),
      created_at: iso(m.created_at),
      verified_at: iso(m.verified_at),
      last_used_at: iso(m.last_used_at),
      ...(m.kind === 'backup_codes' ? { backup_codes_remaining: await store.unusedBackupCodes(ctx, m.id) } : {}),
    })),
  );
  return { methods, trusted_devices: await listDevices(ctx, userId) };
}

export async function eraseTwoFactor({ ctx, userId, tx }: { ctx: ModuleContext; userId: string; tx: Transaction }) {
  await store.deleteAll(ctx, userId, { transaction: tx });
}

export const commands: ModuleCommand[] = [
  {
    name: 'two-factor:reset',
    description: "Turn a user's two-factor off and delete their methods and trusted devices (as the admin reset does); the user is told by mail",
    options: [{ flags: '--email <email>', description: "the user's email address" }],
    alias: ['user', 'two-factor', 'reset'],
    async run(ctx) {
      const email = String(ctx.options.email ?? ctx.args[0] ?? '');
      if (!email) throw new AppError(400, 'VALIDATION_ERROR', 'two-factor reset needs --email <email>');
      const user = await ctx.ctx.users.findByEmail(email);
      if (!user) throw new AppError(404, 'NOT_FOUND', `no user with email ${email}`);
      const result = await resetUser(ctx.ctx, user, null);
      ctx.print(`Two-factor reset for ${user.email}: ${result.methods_removed} method(s) removed, two-factor off`);
      return result;
    },
  },
];
