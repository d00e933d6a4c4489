import type { Config } from '../config/schema.js';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord, UserRepository } from '../data/repositories/user-repository.js';
import { AppError, forbidden, isAppError } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import type { LoginBackoff } from '../limits/login-backoff.js';
import type { Logger } from '../log/logger.js';
import type { Hooks } from '../modules/hooks.js';
import { runAfterHooks } from './after-hooks.js';
import { isDatabaseUnavailable } from '../data/db-errors.js';
import type { SessionService } from './session-service.js';
import type { SignIn, SignInResult } from './sign-in.js';
import {
  assertNoContextWords,
  assertPasswordPolicy,
  clientClosed,
  isClientClosed,
  personalWords,
  siteWords,
  type PasswordHasher,
} from './security/passwords.js';
import type { PublicRegistration } from './user-fields.js';
import type { UserService } from './user-service.js';
import type { AuditService } from '../audit/audit-service.js';
import type { Transaction } from '../data/unit-of-work.js';
import { actorOf, signInFailed, signInSucceeded, THROTTLED_ONCE_PER_MS, type SignInFailure } from './sign-in-audit.js';

export interface ClientInfo {
  ip?: string | null;
  userAgent?: string | null;
  deviceId?: string | null;
  /** A trusted-device token (cookie `trusted_device` or header X-Trusted-Device) offered to the two-factor provider. */
  trustedDevice?: string | null;
  /** Key of the failed-login backoff (account + caller's network: the login attempt's backoffKey, src/limits/login-policy.ts); default: the account. */
  throttleKey?: string;
  /** Aborts when the caller has gone (the connection closed before the answer): a login still waiting for a bcrypt slot then stops. */
  abandoned?: AbortSignal;
}

export type LoginResult = SignInResult;

export interface RegisterResult {
  user: UserRecord;
  /** Absent when the email must be verified first. */
  session: { token: string; session: SessionRecord } | null;
}

export interface AuthServiceDeps {
  users: UserRepository;
  userService: UserService;
  sessions: SessionService;
  passwords: PasswordHasher;
  hooks: Hooks;
  signIn: SignIn;
  backoff: LoginBackoff;
  /** Refused sign-ins are recorded after the answer (recordLater): no timing difference between accounts. */
  audit: Pick<AuditService, 'record' | 'recordLater'>;
  /** Opens a unit of work (a sign-out and its event commit together). */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  config: Pick<Config, 'requireEmailVerification' | 'registrationEnabled' | 'registrationEnumerationSafe' | 'productName' | 'publicBaseUrl'>;
  /** Tells the owner of an address a registration asked for (REGISTRATION_ENUMERATION_SAFE); never throws. */
  addressTaken?: (email: string) => Promise<void>;
  /** Where failing after-event hooks are reported. */
  logger?: Logger;
}

export const invalidCredentials = () => new AppError(401, Codes.INVALID_CREDENTIALS, 'Invalid credentials');

/**
 * The backoff must hold for login to be safe, so when its store (Redis) fails the login is refused
 * with a clear 503 rather than let through unthrottled or answered with a 500.
 */
async function guard<T>(op: Promise<T>): Promise<T> {
  try {
    return await op;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError(503, Codes.SERVICE_UNAVAILABLE, 'Login is temporarily unavailable; try again shortly');
  }
}

/** Why a known account's password sign-in was refused (the answer is the same 401 for all). */
function failureOf(user: UserRecord, passwordOk: boolean): SignInFailure {
  if (user.deleted_at) return 'deleted';
  if (!passwordOk) return 'wrong_password';
  return 'disabled';
}

/** Login, public registration and logout: the flows that issue and end sessions. */
export function createAuthService(deps: AuthServiceDeps) {
  const { users, sessions, passwords, hooks, backoff, config } = deps;

  return {
    /**
     * Email or user name + password. Unknown users, wrong passwords, and deleted or disabled accounts
     * all get the same 401 after the same bcrypt work; "not verified" is told only once the password
     * is right. Throws 429 (with `retry_after`) while the account is backing off.
     */
    async login(identifier: string, password: string, client: ClientInfo = {}): Promise<LoginResult> {
      const account = identifier.trim().toLowerCase();
      const throttle = client.throttleKey ?? account;
      const decision = await guard(backoff.reserve(throttle));
      if (!decision.allowed) {
        deps.audit.recordLater(
          {
            type: 'sign_in.throttled',
            outcome: 'failure',
            actor: null,
            details: { method: 'password', limit: 'account_backoff', identifier: account, retry_after: decision.retryAfterSec },
          },
          { oncePer: { key: `account_backoff|${account}`, ms: THROTTLED_ONCE_PER_MS } },
        );
        throw new AppError(429, Codes.RATE_LIMITED, 'Too many login attempts for this account; try again later', undefined, {
          retry_after: decision.retryAfterSec,
        });
      }
      let user: UserRecord | null;
      let ok: boolean;
      try {
        if (client.abandoned?.aborted) throw clientClosed();
        user = account ? await users.findByLogin(account) : null;
        ok = await passwords.verify(password, user?.password_hash ?? null, client.abandoned);
      } catch (err) {
        // Nothing was checked (an outage, or a caller gone before its turn to hash): the reservation
        // goes back, so neither locks an account.
        if (isDatabaseUnavailable(err) || isClientClosed(err)) {
          await backoff.release(throttle).catch(() => undefined);
        }
        throw err;
      }
      if (!user || !ok || user.disabled_at || user.deleted_at) {
        await guard(backoff.recordFailure(throttle));
        deps.audit.recordLater(
          user ? signInFailed('password', failureOf(user, ok), { user }) : signInFailed('password', 'unknown_account', { identifier: account }),
        );
        throw invalidCredentials();
      }
      await guard(backoff.recordSuccess(throttle));
      // A password `init` or `user create` made up works for 24 hours (ASVS 6.4.1); any password set since clears it.
      if (user.password_expires_at && new Date(user.password_expires_at).getTime() <= Date.now()) {
        deps.audit.recordLater(signInFailed('password', 'password_expired', { user }));
        throw new AppError(401, Codes.PASSWORD_EXPIRED, 'This generated password has expired: set a new one with a password reset, or ask an admin');
      }
      if (config.requireEmailVerification && !user.is_verified) {
        deps.audit.recordLater(signInFailed('password', 'unverified', { user }));
        throw new AppError(403, Codes.EMAIL_NOT_VERIFIED, 'Email not verified');
      }
      return deps.signIn(user, 'password', client);
    },

    /**
     * Creates a customer (whatever type was asked for); a session unless verification is required. A
     * taken email is 400 EMAIL_TAKEN, after the same bcrypt work a new account costs; with
     * REGISTRATION_ENUMERATION_SAFE (which requires verification) it is answered as a new account is —
     * an unsaved look-alike user, no session — and the address's owner is mailed instead.
     */
    async registerPublic(input: PublicRegistration, client: ClientInfo = {}): Promise<RegisterResult> {
      if (!config.registrationEnabled) throw forbidden('Registration is disabled', Codes.REGISTRATION_DISABLED);
      assertPasswordPolicy(input.password);
      assertNoContextWords(input.password, [...siteWords(config), ...personalWords(input)]);
      const fields = { ...input, user_type: 'customer' as const, is_verified: false };
      const opts = { actor: null, via: 'registration' as const, verified: false };
      let user: UserRecord;
      try {
        user = await deps.userService.createParsed(fields, opts);
      } catch (err) {
        if (!(config.registrationEnumerationSafe && isAppError(err) && err.code === Codes.EMAIL_TAKEN)) throw err;
        await deps.addressTaken?.(input.email);
        return { user: deps.userService.draft(fields, opts), session: null };
      }
      // The session first: once the account exists, nothing after it may turn the answer into an error.
      // It proved a password (the one just chosen): `pwd`, as the sign-in seam would say.
      const session = config.requireEmailVerification ? null : await sessions.create(user.id, { ...client, signInMethod: 'password', amr: ['pwd'] });
      // Its first session is a sign-in too (who signed in as this user, from where). Written after the
      // answer, which nothing may turn into an error once the account exists.
      if (session) deps.audit.recordLater(signInSucceeded(user, 'password', session.session, { registration: true }));
      await runAfterHooks(hooks, deps.logger, 'auth.registered', { user });
      return { user, session };
    },

    /** Ends the session everywhere at once; `sign_out` (the user ending their own session) commits with it. */
    async logout(token: string, signedIn?: { user: Pick<UserRecord, 'id' | 'user_type'>; session: Pick<SessionRecord, 'user_id' | 'status'> }): Promise<void> {
      await deps.transaction(async (tx) => {
        const ended = await sessions.revokeToken(token, { tx });
        if (!ended || !signedIn || signedIn.session.user_id !== signedIn.user.id) return;
        const pending = signedIn.session.status === 'pending_2fa' ? { pending_two_factor: true } : {};
        await deps.audit.record(
          {
            type: 'sign_out',
            userId: signedIn.user.id,
            actor: actorOf(signedIn.user),
            details: { ...pending },
          },
          { tx },
        );
      });
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
