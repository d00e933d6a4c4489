import type { ModuleContext, Transaction } from '../../src/module-api.js';

/** Sets users.two_factor through the one user writer, inside the caller's transaction (caches and 'user.updated' follow the commit). */
export async function writeTwoFactorFlag(ctx: ModuleContext, userIds: string | string[], on: boolean, tx: Transaction): Promise<void> {
  for (const id of Array.isArray(userIds) ? userIds : [userIds]) await ctx.users.setTwoFactor(id, on, { tx });
}
