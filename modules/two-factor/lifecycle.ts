import {
  AppError,
  findUserByEmail,
  forgetUser,
  usersWithTwoFactor,
  writeTwoFactorFlag,
  type AppContext,
  type ModuleCommand,
  type ModuleUninstallGuard,
  type SecondFactorPayload,
  type Transaction,
} from './core.js';
import { isTrusted, listDevices } from './devices.js';
import { loginMethods, maskIdentifier, views } from './methods.js';
import { resetUser } from './service.js';
import { store } from './store.js';

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/**
 * 'auth.two_factor.methods': at every sign-in of a user with 2FA on (password, token, social), and on
 * the pending current-user reads. Says the factor is provided (core refuses sign-in when nobody does),
 * skips it for a trusted device, and lists the methods the pending session may use.
 */
export async function onSecondFactor(payload: Record<string, unknown>, app: AppContext): Promise<void> {
  const p = payload as SecondFactorPayload;
  p.provided = true;
  if (!p.user?.two_factor) return;
  if (p.client?.trustedDevice && (await isTrusted(app, p.user, p.client.trustedDevice))) {
    p.trusted = true;
    return;
  }
  const rows = await loginMethods(app, p.user);
  for (const v of await views(app, rows)) p.methods.push({ id: v.id, method: v.method, type: v.method, status: v.status, identifier: v.identifier, metadata: v.metadata });
}

/** Uninstalling while users rely on 2FA would lock them out (logins answer 503): refused unless forced. */
export const uninstallGuard: ModuleUninstallGuard = async ({ app, force, transaction }) => {
  const ids = await usersWithTwoFactor(app, transaction);
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
  await writeTwoFactorFlag(app, ids, false, transaction);
  return {
    notices: [`Two-factor authentication was turned off for ${ids.length} user${ids.length === 1 ? '' : 's'}`],
    afterCommit: async () => {
      for (const id of ids) await forgetUser(app, id).catch(() => undefined);
    },
  };
};

/** The privacy export: methods (kind, masked address, dates), trusted devices, how many backup codes are left. Never secrets or codes. */
export async function exportTwoFactor({ app, userId }: { app: AppContext; userId: string }) {
  const rows = await store.methods(app, userId);
  const methods = await Promise.all(
    rows.map(async (m) => ({
      id: m.id, method: m.kind, status: m.status, identifier: maskIdentifier(m), created_at: iso(m.created_at), verified_at: iso(m.verified_at), last_used_at: iso(m.last_used_at),
      ...(m.kind === 'backup_codes' ? { backup_codes_remaining: await store.unusedBackupCodes(app, m.id) } : {}),
    })),
  );
  return { methods, trusted_devices: await listDevices(app, userId) };
}

export async function eraseTwoFactor({ app, userId, transaction }: { app: AppContext; userId: string; transaction: Transaction }) {
  await store.deleteAll(app, userId, { transaction });
}

export const commands: ModuleCommand[] = [
  {
    name: 'two-factor:reset',
    description: "Turn a user's two-factor off and delete their methods and trusted devices (as the admin reset does); the user is told by mail",
    options: [{ flags: '--email <email>', description: "the user's email address" }],
    async run(ctx) {
      const email = String(ctx.options.email ?? ctx.args[0] ?? '');
      if (!email) throw new AppError(400, 'VALIDATION_ERROR', 'two-factor reset needs --email <email>');
      const user = await findUserByEmail(ctx.app, email);
      if (!user) throw new AppError(404, 'NOT_FOUND', `no user with email ${email}`);
      const result = await resetUser(ctx.app, user, null);
      ctx.print(`Two-factor reset for ${user.email}: ${result.methods_removed} method(s) removed, two-factor off`);
      return result;
    },
  },
];
