import { canonicalEmail } from '../data/models/user-columns.js';
import type { AuthTokenRecord } from '../data/repositories/auth-token-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { AppError, badRequest, isAppError, unauthorized } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import { invalidInput } from '../errors/zod-issues.js';
import { maskEmail } from '../mail/outbox.js';
import { resetPageBase, withParams } from './account-links.js';
import { invalidToken, isActiveUser, isVerified, minutes, type AccountFlowDeps } from './account-flow-deps.js';
import { accountWorkKey } from './deferred-work.js';
import { INVALID_CURRENT_PASSWORD } from './password-service.js';
import { emailField } from './user-fields.js';

/** The API route the confirmation link opens when WEB_PAGES is off (as the verification link does). */
export const EMAIL_CHANGE_CONFIRM_PATH = '/auth/user/me/email/confirm';
/** The hosted page it opens when WEB_PAGES is on (src/web): a button, so a mail scanner cannot confirm. */
export const EMAIL_CHANGE_PAGE_PATH = '/account/email/confirm';

/** The one answer to a request, whether or not the new address is free (no enumeration). */
export const EMAIL_CHANGE_REQUESTED = 'If the new address can be used, a confirmation link has been sent to it. Your address changes once it is opened.';

export const EMAIL_UNCHANGED = 'EMAIL_UNCHANGED';
export const PASSWORD_NOT_SET = 'PASSWORD_NOT_SET';

/** Who asks: the signed-in user (read again from the store: a cached user carries no password hash) and their session. */
export interface EmailChangeActor {
  user: Pick<UserRecord, 'id'>;
  sessionId: string;
}

export interface EmailChangeInput {
  newEmail: unknown;
  password: unknown;
}

export interface EmailChangeOptions {
  /**
   * Runs once the input is known good and just before the password is checked: the HTTP layer counts
   * the attempt in the `login` class there, so guessing through this route spends the budget the
   * password change spends, and bad input spends none.
   */
  beforePasswordCheck?: () => Promise<void>;
}

/** What a confirmation changed. */
export interface EmailChanged {
  user: UserRecord;
  previous: string;
  /** How many of the user's other sessions ended. */
  sessionsRevoked: number;
}

interface ChangeMeta {
  /** The address when the change was asked for: the link dies if it changed since. */
  from: string;
  /** The session that asked: it stays signed in, every other one ends. */
  session_id: string | null;
}

function metaOf(rec: AuthTokenRecord): ChangeMeta | null {
  let meta: unknown = rec.meta;
  if (typeof meta === 'string') {
    try {
      meta = JSON.parse(meta);
    } catch {
      return null;
    }
  }
  const m = meta as Partial<ChangeMeta> | null;
  if (!m || typeof m.from !== 'string') return null;
  return { from: m.from, session_id: typeof m.session_id === 'string' ? m.session_id : null };
}

/** 409: the address was free when asked for and is taken now (another account confirmed it first). */
const taken = () =>
  new AppError(409, Codes.EMAIL_TAKEN, 'This address is now used by another account; nothing was changed', [{ field: 'new_email', message: 'taken' }]);

/**
 * Self-service email change (docs/email-change.md): a signed-in user proves their password and names
 * a new address; a single-use link mailed to that address makes the change. The request answers the
 * same whatever the address (a taken one gets an "address in use" mail instead of a link), the current
 * address is told (`email.change_requested`'s security notice), and the change commits with its events
 * (`email.changed`, `session.revoked`) and the sign-out of every other session in one unit of work.
 */
export function createEmailChangeService(deps: AccountFlowDeps) {
  const { config, users, tokens, notify, passwords } = deps;
  const linkBase = () => `${config.publicBaseUrl.replace(/\/+$/, '')}${config.webPages ? EMAIL_CHANGE_PAGE_PATH : EMAIL_CHANGE_CONFIRM_PATH}`;

  /** The new address under the one email rule, refused when missing, malformed, too long or the current one. */
  function parseAddress(current: UserRecord, value: unknown): string {
    if (value === undefined || value === null || value === '') throw badRequest('new_email is required', [{ field: 'new_email', message: 'required' }]);
    const r = emailField.safeParse(value);
    if (!r.success) throw invalidInput(r.error, 'new_email');
    if (r.data === canonicalEmail(current.email)) {
      throw badRequest('The new address is the current one', [{ field: 'new_email', message: 'same as the current address' }], EMAIL_UNCHANGED);
    }
    return r.data;
  }

  /** The account a token changes, or null when the link no longer holds (see docs/email-change.md). */
  async function target(rec: AuthTokenRecord | null): Promise<{ user: UserRecord; to: string; meta: ChangeMeta } | null> {
    if (!rec?.user_id || !rec.identifier) return null;
    const meta = metaOf(rec);
    const user = meta ? await users.findById(rec.user_id) : null;
    if (!meta || !isActiveUser(user)) return null;
    // The account's address changed since (another change, an admin): the link asked to replace another one.
    if (canonicalEmail(user.email) !== meta.from) return null;
    // A password change after the request (the owner taking the account back) voids it.
    const changed = user.password_changed_at ? new Date(user.password_changed_at).getTime() : null;
    if (changed !== null && rec.created_at.getTime() < changed) return null;
    return { user, to: rec.identifier, meta };
  }

  return {
    /**
     * Checks the input and the password, then answers the same for a free address and a taken one:
     * the link (or, for a taken address, the "address in use" mail to its owner) goes out after the
     * answer, and the request path does the same work either way (one lookup, one count).
     */
    async request(actor: EmailChangeActor, input: EmailChangeInput, opts: EmailChangeOptions = {}): Promise<{ expiresIn: number }> {
      const user = await users.findById(actor.user.id);
      if (!isActiveUser(user)) throw unauthorized();
      const newEmail = parseAddress(user, input.newEmail);
      if (!user.password_hash) {
        throw new AppError(400, PASSWORD_NOT_SET, 'This account has no password: set one with a password reset link first, then change the address', [
          { field: 'password', message: 'no password set' },
        ]);
      }
      if (typeof input.password !== 'string' || input.password === '') throw badRequest('password is required', [{ field: 'password', message: 'required' }]);
      await opts.beforePasswordCheck?.();
      if (!(await passwords.verify(input.password, user.password_hash))) {
        throw new AppError(400, INVALID_CURRENT_PASSWORD, 'Current password is incorrect', [{ field: 'password', message: 'incorrect' }]);
      }

      const holder = await users.findByEmail(newEmail, { includeDeleted: true });
      const allowed = await notify.mayMessage(newEmail);
      const previous = canonicalEmail(user.email);
      // The current address is told (security-notices.ts), whatever becomes of the request.
      deps.audit.recordLater({ type: 'email.change_requested', userId: user.id, details: { identifier: newEmail } });
      const ttl = config.emailChangeTokenTtl;
      if (allowed) {
        deps.deferred.later(
          'email change mail',
          async () => {
            // A newer request voids the older links in both cases, so whether an old link still works
            // tells nothing about the address asked for last.
            if (holder) {
              await tokens.voidForUser('email_change', user.id);
              if (isActiveUser(holder)) {
                await notify.email({ to: newEmail, template: 'email-change-address-in-use', lang: holder.lang, data: { resetUrl: resetPageBase(config) } });
              }
              return;
            }
            const t = await tokens.issue({
              kind: 'email_change',
              userId: user.id,
              identifier: newEmail,
              channel: 'email',
              ttlSec: ttl,
              supersede: 'user',
              meta: { from: previous, session_id: actor.sessionId } satisfies ChangeMeta,
            });
            await notify.email({
              to: newEmail,
              template: 'email-change-confirm',
              lang: user.lang,
              data: {
                name: user.name ?? undefined,
                link: withParams(linkBase(), { token: t.token }),
                expiresMinutes: minutes(ttl),
                currentEmail: maskEmail(previous),
              },
            });
          },
          accountWorkKey(user.id),
        );
      }
      return { expiresIn: ttl };
    },

    /**
     * Uses a link up and moves the account to its address, verified: the row, `email.changed` (the
     * previous address as its identifier), `email.verified` when the account was not, and the end of
     * every session but the one that asked, in one unit of work; caches everywhere and `user.updated`
     * follow the commit. 400 INVALID_TOKEN for a bad, used, expired or voided link; 409 EMAIL_TAKEN when
     * another account took the address meanwhile (nothing is written, the link is spent).
     */
    async confirm(token: string): Promise<EmailChanged> {
      const found = await target(await tokens.consume('email_change', token));
      if (!found) throw invalidToken();
      const { user, to, meta } = found;
      const holder = await users.findByEmail(to, { includeDeleted: true });
      if (holder && holder.id !== user.id) throw taken();
      const self = { id: user.id, user_type: user.user_type };
      try {
        return await deps.transaction(async (tx) => {
          const updated = await deps.userService.patch(user.id, { email: to, is_verified: true }, { tx });
          await deps.audit.record(
            { type: 'email.changed', userId: user.id, actor: self, details: { identifier: meta.from, by: 'self', via: 'confirmation_link' } },
            { tx },
          );
          if (!isVerified(user)) await deps.audit.record({ type: 'email.verified', userId: user.id, actor: self, details: { via: 'email_change' } }, { tx });
          const revoked = await deps.sessions.revokeAllForUser(user.id, meta.session_id ?? undefined, { tx });
          if (revoked > 0) {
            await deps.audit.record(
              { type: 'session.revoked', userId: user.id, actor: self, details: { by: 'user', count: revoked, reason: 'email.changed' } },
              { tx },
            );
          }
          return { user: updated, previous: meta.from, sessionsRevoked: revoked };
        });
      } catch (err) {
        // The unique index caught a confirmation racing this one to the same address: rolled back.
        if (isAppError(err) && err.code === Codes.EMAIL_TAKEN) throw taken();
        throw err;
      }
    },
  };
}

export type EmailChangeService = ReturnType<typeof createEmailChangeService>;
