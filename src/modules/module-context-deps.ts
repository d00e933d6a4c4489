import type { Sequelize } from 'sequelize';
import type { Cache } from '../cache/cache.js';
import type { Config } from '../config/schema.js';
import type { UserFieldDef } from '../data/models/user.model.js';
import type { UserRepository } from '../data/repositories/user-repository.js';
import type { Dialect } from '../data/sequelize.js';
import type { LoginBackoff, RateLimiter } from '../limits/limit-types.js';
import type { Logger } from '../log/logger.js';
import type { Mailer } from '../mail/mailer.js';
import type { SmsSender } from '../mail/sms.js';
import type { PersonalDataDeps } from '../services/account-data.js';
import type { PasswordHasher } from '../services/security/passwords.js';
import type { SessionService } from '../services/session-service.js';
import type { SignInService } from '../services/sign-in.js';
import type { UserService } from '../services/user-service.js';
import type { SocialService } from '../social/social-service.js';
import type { Hooks } from './hooks.js';
import type { AuditService } from '../audit/audit-service.js';

/**
 * What a module context is built from: core's services and stores, narrowed to what its members use
 * (the personal-data export and erasure bring their own, services/account-data.ts).
 */
export type ModuleContextDeps = PersonalDataDeps & {
  config: Config;
  logger: Logger;
  dialect: Dialect;
  sequelize: Sequelize;
  cache: Cache;
  limiter: Pick<RateLimiter, 'consume' | 'refund'>;
  /** The failed-login backoff password logins use: a module's failed proofs of a known user count in it too. */
  loginBackoff: Pick<LoginBackoff, 'reserve' | 'recordFailure' | 'recordSuccess' | 'release'>;
  hooks: Pick<Hooks, 'run'>;
  repos: { users: Pick<UserRepository, 'findById' | 'findByEmail' | 'findByIds' | 'readColumns'> };
  services: {
    users: Pick<UserService, 'patch' | 'idsWhere' | 'clearColumns' | 'toPublic'>;
    passwords: Pick<PasswordHasher, 'hash' | 'verify'>;
    sessions: Pick<SessionService, 'revokeAllForUser'>;
    signIn: Pick<SignInService, 'signIn' | 'completePending' | 'pendingMethods'>;
    /** Linked social accounts: a module that is a way in asks whether another way is left. */
    social: Pick<SocialService, 'usableLinkCount'>;
    mailer: Pick<Mailer, 'send'>;
    sms: Pick<SmsSender, 'send'>;
    audit: Pick<AuditService, 'record' | 'recordLater'>;
  };
  /** The module runtime: settings, and what a module may know of others. */
  modules: { config<T>(id: string): T; isInstalled(id: string): boolean; isEnabled(id: string): boolean; userFields(): UserFieldDef[] };
};
