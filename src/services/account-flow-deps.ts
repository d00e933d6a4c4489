import type { Config } from '../config/schema.js';
import type { UserRecord, UserRepository } from '../data/repositories/user-repository.js';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../log/logger.js';
import type { AccountNotifier } from './account-notify.js';
import type { PasswordHasher } from './security/passwords.js';
import type { SessionService } from './session-service.js';
import type { TokenService } from './token-service.js';
import type { UserService } from './user-service.js';
import type { Hooks } from '../modules/hooks.js';
import type { DeferredWork } from './deferred-work.js';
import type { SignIn } from './sign-in.js';
import type { AuditService } from '../audit/audit-service.js';
import type { Transaction } from '../data/unit-of-work.js';

/** What the mail and SMS account flows (verification, password, token login) are built from. */
export interface AccountFlowDeps {
  config: Config;
  logger: Logger;
  users: UserRepository;
  tokens: TokenService;
  sessions: SessionService;
  passwords: PasswordHasher;
  /** User writes go through the user service, the one place that changes a users row. */
  userService: Pick<UserService, 'setPassword' | 'patch'>;
  hooks: Hooks;
  /** The sign-in seam every way of signing in ends in. */
  signIn: SignIn;
  notify: AccountNotifier;
  /** Token inserts and mail for known addresses run here, after the answer (see deferred-work.ts). */
  deferred: DeferredWork;
  /** The security-event record: a change's event in its transaction, a refusal after the answer. */
  audit: Pick<AuditService, 'record' | 'recordLater'>;
  /** Opens a unit of work (a verification and its event commit together). */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  clock?: () => Date;
}

export const INVALID_TOKEN = 'INVALID_TOKEN';

/** One answer for every bad token (unknown, used, expired, voided): nothing tells them apart. */
export const invalidToken = (extra?: Record<string, unknown>) => new AppError(400, INVALID_TOKEN, 'Invalid or expired token', undefined, extra);

const truthy = (v: unknown) => v === true || v === 1 || v === '1' || v === 'true';
export const isVerified = (u: UserRecord) => truthy(u.is_verified);

/** A user who may receive account mail or sign in: present, not disabled, not deleted. */
export const isActiveUser = (u: UserRecord | null): u is UserRecord => !!u && !u.disabled_at && !u.deleted_at;

/** "2026-11-21 14:05 UTC", for the password-changed notice. */
export const mailTime = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * Marks the address verified and writes `email.verified` in one unit of work (`via` says which
 * proof of the mailbox it was: the verification link, a sign-in link or code, a reset link).
 */
export function markVerified(deps: Pick<AccountFlowDeps, 'userService' | 'audit' | 'transaction'>, user: UserRecord, via: string): Promise<UserRecord> {
  return deps.transaction(async (tx) => {
    const updated = await deps.userService.patch(user.id, { is_verified: true }, { tx });
    await deps.audit.record({ type: 'email.verified', userId: user.id, details: { via } }, { tx });
    return updated;
  });
}

export const minutes = (seconds: number) => Math.max(1, Math.round(seconds / 60));
