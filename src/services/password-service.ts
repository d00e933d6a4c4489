import { canonicalEmail } from '../data/models/user-columns.js';
import type { AuthTokenRecord } from '../data/repositories/auth-token-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { AppError, forbidden, notFound } from '../errors/app-error.js';
import { chooseLinkBase, resetPageBase, withParams } from './account-links.js';
import { invalidToken, isActiveUser, isVerified, markVerified, minutes, type AccountFlowDeps } from './account-flow-deps.js';
import { accountWorkKey } from './deferred-work.js';
import type { SetPasswordOptions } from './user-service.js';
import { assertNoContextWords, assertPasswordPolicy, personalWords, siteWords } from './security/passwords.js';

export const INVALID_CURRENT_PASSWORD = 'INVALID_CURRENT_PASSWORD';

export interface PasswordChangeActor {
  user: UserRecord;
  sessionId: string;
}

/**
 * Password reset by mailed link, and password change (own, or by an admin). Every change stamps
 * password_changed_at, which voids reset links issued before it, and ends sessions. The notice mail
 * is sent from the change's security event (src/audit/security-notices.ts), not from here.
 */
export function createPasswordService(deps: AccountFlowDeps) {
  const { config, users, tokens, notify, passwords } = deps;

  /** A reset token only counts while its account is usable, still has that address, and has not changed password since. */
  async function resetTarget(rec: AuthTokenRecord | null): Promise<UserRecord | null> {
    if (!rec?.user_id) return null;
    const user = await users.findById(rec.user_id);
    if (!isActiveUser(user) || canonicalEmail(user.email) !== rec.identifier) return null;
    const changed = user.password_changed_at ? new Date(user.password_changed_at).getTime() : null;
    if (changed !== null && rec.created_at.getTime() < changed) return null;
    return user;
  }

  /** Stores the new hash (ending sessions but `keepSessionId`) and voids reset links; the notice follows the event. */
  async function applyNewPassword(user: UserRecord, password: string, keepSessionId: string | undefined, event: SetPasswordOptions['event']): Promise<void> {
    await deps.userService.setPassword(user.id, password, { exceptSessionId: keepSessionId, event });
    await tokens.voidForUser('password_reset', user.id);
  }

  return {
    /**
     * Mails a reset link when the address has an account; the same work and answer otherwise. The link
     * base is the client's resetUrl only when allow-listed, else APP_URL/reset-password.
     */
    async requestReset(emailInput: string, clientUrl?: string | null): Promise<void> {
      const email = canonicalEmail(emailInput);
      const base = chooseLinkBase(clientUrl, resetPageBase(config), config);
      // The same work on the request path for every address: one lookup, one count against the
      // address. The token and the mail for a real account come after the answer.
      const user = await users.findByEmail(email);
      const allowed = await notify.mayMessage(email);
      if (!isActiveUser(user) || !allowed) return;
      deps.deferred.later(
        'password reset mail',
        async () => {
          const t = await tokens.issue({ kind: 'password_reset', userId: user.id, identifier: email, channel: 'email', ttlSec: config.resetTokenTtl });
          await notify.email({
            to: email,
            template: 'password-reset',
            lang: user.lang,
            data: { name: user.name ?? undefined, link: withParams(base, { token: t.token }), expiresMinutes: minutes(config.resetTokenTtl) },
          });
        },
        accountWorkKey(user.id),
      );
    },

    /** Whether a reset token would be accepted now (does not use it up). */
    async isResetTokenValid(token: string): Promise<boolean> {
      return (await resetTarget(await tokens.peek('password_reset', token))) !== null;
    },

    /** Sets the new password from a reset link; the link dies whatever happens after it is presented. */
    async completeReset(token: string, password: unknown, field = 'password'): Promise<void> {
      assertPasswordPolicy(password, field);
      // The person's words are known once the link is: looked at first, so a refused password leaves the link usable.
      const holder = await resetTarget(await tokens.peek('password_reset', token));
      if (holder) assertNoContextWords(password, [...siteWords(config), ...personalWords(holder)], field);
      const user = await resetTarget(await tokens.consume('password_reset', token));
      if (!user) throw invalidToken();
      await applyNewPassword(user, password, undefined, { type: 'password.reset', details: { via: 'reset_link' } });
      // The link proved control of the mailbox, so the address counts as verified too.
      if (!isVerified(user)) await markVerified(deps, user, 'password_reset');
    },

    /** Changes the caller's own password; their other sessions end, this one stays. */
    async changeOwn(actor: PasswordChangeActor, current: string, next: unknown): Promise<void> {
      assertPasswordPolicy(next, 'new_password');
      assertNoContextWords(next, [...siteWords(config), ...personalWords(actor.user)], 'new_password');
      const fresh = await users.findById(actor.user.id);
      if (!isActiveUser(fresh) || !(await passwords.verify(current, fresh.password_hash))) {
        throw new AppError(400, INVALID_CURRENT_PASSWORD, 'Current password is incorrect', [{ field: 'current_password', message: 'incorrect' }]);
      }
      await applyNewPassword(fresh, next, actor.sessionId, { type: 'password.changed', details: { by: 'self' } });
    },

    /** An admin sets someone's password; only a superadmin may touch a superadmin. All their sessions end. */
    async changeByAdmin(actor: PasswordChangeActor, userId: string, next: unknown): Promise<void> {
      assertPasswordPolicy(next, 'new_password');
      const target = await users.findById(userId);
      if (!target) throw notFound('User not found', 'USER_NOT_FOUND');
      assertNoContextWords(next, [...siteWords(config), ...personalWords(target)], 'new_password');
      if (target.user_type === 'superadmin' && actor.user.user_type !== 'superadmin') {
        throw forbidden("Only a superadmin may change a superadmin's password");
      }
      // An admin resetting their own password through this route keeps the session they are using.
      await applyNewPassword(target, next, target.id === actor.user.id ? actor.sessionId : undefined, {
        type: 'password.changed',
        details: { by: target.id === actor.user.id ? 'self' : 'admin' },
      });
    },
  };
}

export type PasswordService = ReturnType<typeof createPasswordService>;
