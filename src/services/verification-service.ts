import { canonicalEmail } from '../data/models/user-columns.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import type { Hooks } from '../modules/hooks.js';
import { noticeResetUrl, withParams } from './account-links.js';
import { isActiveUser, isVerified, markVerified, type AccountFlowDeps } from './account-flow-deps.js';
import { accountWorkKey } from './deferred-work.js';

/** The route the verification link opens (GET /auth/token/verify). */
export const VERIFY_PATH = '/auth/token/verify';
/** The hosted page it opens instead when WEB_PAGES is on (src/web): it asks for a click before using the token. */
export const VERIFY_PAGE_PATH = '/verify-email';

/**
 * Email verification: the link mailed on registration (when REQUIRE_EMAIL_VERIFICATION is on) and on
 * request, and what opening it does.
 */
export function createVerificationService(deps: AccountFlowDeps) {
  const { config, users, tokens, notify } = deps;
  const log = deps.logger.child({ component: 'verification' });

  /** Issues a fresh link; the returned promise is the mail going out (it never rejects). */
  async function issueFor(user: UserRecord): Promise<{ sent: Promise<boolean> }> {
    const email = canonicalEmail(user.email);
    const t = await tokens.issue({ kind: 'verify_email', userId: user.id, identifier: email, channel: 'email', ttlSec: config.verifyTokenTtl });
    const link = withParams(`${config.publicBaseUrl.replace(/\/+$/, '')}${config.webPages ? VERIFY_PAGE_PATH : VERIFY_PATH}`, { token: t.token });
    return { sent: notify.email({ to: email, template: 'verify-email', lang: user.lang, data: { name: user.name ?? undefined, link } }) };
  }

  async function sendFor(user: UserRecord): Promise<boolean> {
    return (await issueFor(user)).sent;
  }

  return {
    sendFor,

    /** Sends the verification mail after public registration; a failure is logged, the account stays. */
    attach(hooks: Hooks): () => void {
      return hooks.on('auth.registered', async (payload) => {
        if (!config.requireEmailVerification) return;
        const id = (payload.user as { id?: unknown } | undefined)?.id;
        if (typeof id !== 'string') return;
        try {
          const user = await users.findById(id);
          if (isActiveUser(user) && !isVerified(user)) await sendFor(user);
        } catch (err) {
          log.error({ userId: id, reason: (err as Error).message }, 'verification mail after registration failed');
        }
      });
    },

    /**
     * Sends a fresh link when the address belongs to an unverified account. The request path does the
     * same work for every address (one lookup, one count); the token and the mail come after the
     * answer, so neither the answer nor its timing tells which.
     */
    async resend(emailInput: string): Promise<void> {
      const email = canonicalEmail(emailInput);
      const user = await users.findByEmail(email);
      const allowed = await notify.mayMessage(email);
      if (isActiveUser(user) && !isVerified(user) && allowed) deps.deferred.later('verification mail', () => sendFor(user), accountWorkKey(user.id));
    },

    /**
     * A registration asked for an address that already has an account (REGISTRATION_ENUMERATION_SAFE):
     * its owner is told, within the address's notice budget, instead of the caller. Awaited like the
     * verification mail a new registration waits for, so the two answers take alike; never throws.
     */
    async addressTaken(emailInput: string): Promise<void> {
      const email = canonicalEmail(emailInput);
      try {
        const holder = await users.findByEmail(email);
        if (!isActiveUser(holder) || !(await notify.mayMessage(email, 'notices'))) return;
        await notify.email({
          to: email,
          template: 'registration-address-in-use',
          lang: holder.lang,
          data: { name: holder.name ?? undefined, resetUrl: noticeResetUrl(config) },
        });
      } catch (err) {
        log.error({ reason: (err as Error).message }, 'notice of a registration with a taken address failed');
      }
    },

    /**
     * Uses a verification token up and marks the address verified. Null when the token is bad, or when
     * the account's email changed since the link was sent (the link proved the old address only).
     */
    async verify(token: string): Promise<UserRecord | null> {
      const rec = await tokens.consume('verify_email', token);
      if (!rec?.user_id) return null;
      const user = await users.findById(rec.user_id);
      if (!isActiveUser(user) || canonicalEmail(user.email) !== rec.identifier) return null;
      if (isVerified(user)) return user;
      return markVerified(deps, user, 'verification_link');
    },
  };
}

export type VerificationService = ReturnType<typeof createVerificationService>;
