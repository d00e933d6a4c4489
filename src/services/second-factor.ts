import type { UserRecord } from '../data/repositories/user-repository.js';
import { AppError } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import type { Hooks } from '../modules/hooks.js';

/** The event a two-factor provider (a module) answers; core decides nothing about methods itself. */
export const TWO_FACTOR_METHODS_EVENT = 'auth.two_factor.methods';

/**
 * What handlers of 'auth.two_factor.methods' receive at sign-in. A provider pushes the methods the
 * pending session may use, sets `provided`, and may set `trusted` when the caller presented a device
 * it trusts for this user (the second step is then skipped).
 */
export interface SecondFactorPayload extends Record<string, unknown> {
  user: UserRecord;
  /** The sign-in's client (address, agent, trusted-device token); absent on current-user reads. */
  client?: { ip?: string | null; userAgent?: string | null; trustedDevice?: string | null };
  methods: unknown[];
  provided: boolean;
  trusted: boolean;
}

/**
 * The one decision every way of signing in makes: a full session, or a pending two-factor one.
 * Fails closed: a user with two-factor on and nothing to check the second factor (the providing
 * module switched off or uninstalled) gets 503 MODULE_DISABLED, never a full session.
 */
export async function decideSecondFactor(
  hooks: Hooks,
  user: UserRecord,
  client: SecondFactorPayload['client'] = {},
): Promise<{ pending: boolean; methods: unknown[] }> {
  if (!user.two_factor) return { pending: false, methods: [] };
  const payload: SecondFactorPayload = { user, client, methods: [], provided: false, trusted: false };
  await hooks.run(TWO_FACTOR_METHODS_EVENT, payload);
  if (!payload.provided && payload.methods.length === 0) {
    throw new AppError(503, Codes.MODULE_DISABLED, 'Two-factor authentication is unavailable; sign-in is refused until it is back');
  }
  return payload.trusted ? { pending: false, methods: [] } : { pending: true, methods: payload.methods };
}
