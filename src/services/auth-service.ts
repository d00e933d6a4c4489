import type { Config } from '../config/schema.js';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord, UserRepository } from '../data/repositories/user-repository.js';
import { AppError, forbidden } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import type { LoginBackoff } from '../limits/login-backoff.js';
import type { Logger } from '../log/logger.js';
import type { Hooks } from '../modules/hooks.js';
import { runAfterHooks } from './after-hooks.js';
import { isDatabaseUnavailable } from '../data/db-errors.js';
import type { SessionService } from './session-service.js';
import type { SignIn, SignInResult } from './sign-in.js';
import { assertPasswordPolicy, type PasswordHasher } from './security/passwords.js';
import type { PublicRegistration } from './user-fields.js';
import type { UserService } from './user-service.js';

export interface ClientInfo {
  ip?: string | null;
  userAgent?: string | null;
  deviceId?: string | null;
  /** A trusted-device token (cookie `trusted_device` or header X-Trusted-Device) offered to the two-factor provider. */
  trustedDevice?: string | null;
  /** Key of the failed-login backoff (account + caller's network: the login attempt's backoffKey, src/limits/login-policy.ts); default: the account. */
  throttleKey?: string;
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
  config: Pick<Config, 'requireEmailVerification' | 'registrationEnabled'>;
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
        throw new AppError(429, Codes.RATE_LIMITED, 'Too many login attempts for this account; try again later', undefined, {
          retry_after: decision.retryAfterSec,
        });
      }
      let user: UserRecord | null;
      try {
        user = account ? await users.findByLogin(account) : null;
      } catch (err) {
        // Nothing was checked: the reservation goes back, so an outage locks no account.
        if (isDatabaseUnavailable(err)) await backoff.release(throttle).catch(() => undefined);
        throw err;
      }
      const ok = await passwords.verify(password, user?.password_hash ?? null);
      if (!user || !ok || user.disabled_at || user.deleted_at) {
        await guard(backoff.recordFailure(throttle));
        throw invalidCredentials();
      }
      await guard(backoff.recordSuccess(throttle));
      if (config.requireEmailVerification && !user.is_verified) {
        throw new AppError(403, Codes.EMAIL_NOT_VERIFIED, 'Email not verified');
      }
      return deps.signIn(user, 'password', client);
    },

    /** Creates a customer (whatever type was asked for); a session unless verification is required. */
    async registerPublic(input: PublicRegistration, client: ClientInfo = {}): Promise<RegisterResult> {
      if (!config.registrationEnabled) throw forbidden('Registration is disabled', Codes.REGISTRATION_DISABLED);
      assertPasswordPolicy(input.password);
      const user = await deps.userService.createParsed(
        { ...input, user_type: 'customer', is_verified: false },
        { actor: null, via: 'registration', verified: false },
      );
      // The session first: once the account exists, nothing after it may turn the answer into an error.
      const session = config.requireEmailVerification ? null : await sessions.create(user.id, client);
      await runAfterHooks(hooks, deps.logger, 'auth.registered', { user });
      return { user, session };
    },

    /** Ends the session everywhere at once. */
    async logout(token: string): Promise<void> {
      await sessions.revokeToken(token);
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
