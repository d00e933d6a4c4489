import type { Transaction } from 'sequelize';
import type { Config } from '../config/schema.js';
import type { UserRecord, UserRepository } from '../data/repositories/user-repository.js';
import { forbidden } from '../errors/app-error.js';
import type { AuditService } from '../audit/audit-service.js';
import type { UserService } from '../services/user-service.js';
import type { AccountRepository, LinkedAccountRecord } from './account-repository.js';
import { SocialCodes, socialError } from './errors.js';
import { isProviderId } from './settings.js';

export interface LinkedAccountsDeps {
  config: Config;
  accounts: AccountRepository;
  transaction<T>(fn: (t: Transaction) => Promise<T>): Promise<T>;
  users: UserRepository;
  userService: UserService;
  audit: Pick<AuditService, 'record'>;
  /** 503 while social login is off (the social service's own check). */
  assertEnabled(): void;
}

/**
 * A user's linked provider accounts: listing them, and unlinking one (by the user or an admin) under
 * the last-way rule: never the only way left to sign in (no password and no other provider).
 */
export function createLinkedAccounts(deps: LinkedAccountsDeps) {
  const { config, accounts, assertEnabled } = deps;

  return {
    async listAccounts(userId: string): Promise<LinkedAccountRecord[]> {
      assertEnabled();
      return accounts.listForUser(userId);
    },

    /**
     * How many linked accounts the user could sign in with now: 0 while social login is off (a module
     * deciding whether it holds the last way in must not count a link that cannot be used).
     */
    async usableLinkCount(userId: string): Promise<number> {
      return config.socialLogin ? (await accounts.listForUser(userId)).length : 0;
    },

    /** Unlinks, unless it is the user's last way to sign in (no password and no other provider). */
    async unlink(user: UserRecord, provider: string): Promise<void> {
      await removeLink(user.id, provider, 'self');
    },

    /** An admin's view of a user's linked accounts (GET /auth/admin/users/:user_id/social-accounts); 404 for no such user. */
    async adminListAccounts(userId: string): Promise<LinkedAccountRecord[]> {
      assertEnabled();
      await deps.userService.get(userId);
      return accounts.listForUser(userId);
    },

    /**
     * An admin unlinks a user's provider account (a lost or taken-over provider account): the same
     * last-way rule as the user's own unlink, only a superadmin acts on a superadmin, written as
     * `social.unlinked` with the admin as actor (`details.by: admin`), which mails the user.
     */
    async adminUnlink(admin: UserRecord, userId: string, provider: string): Promise<void> {
      assertEnabled();
      const target = await deps.userService.get(userId);
      if (target.user_type === 'superadmin' && admin.user_type !== 'superadmin') throw forbidden('Only a superadmin can manage a superadmin');
      await removeLink(target.id, provider, 'admin');
    },
  };

  async function removeLink(userId: string, provider: string, by: 'self' | 'admin'): Promise<void> {
    assertEnabled();
    if (!isProviderId(provider)) throw socialError(404, SocialCodes.ACCOUNT_NOT_LINKED, 'No such linked account');
    await deps.transaction(async (t) => {
      // Locks the user's accounts (PostgreSQL; SQLite's write transaction is exclusive), so two
      // unlinks at once cannot each leave the other as the last way in and both succeed.
      const all = await accounts.listForUser(userId, t, true);
      const target = all.find((a) => a.provider === provider);
      if (!target) throw socialError(404, SocialCodes.ACCOUNT_NOT_LINKED, 'No such linked account');
      const current = await deps.users.findById(userId);
      if (!current?.password_hash && all.length <= 1) {
        throw socialError(
          400,
          SocialCodes.LAST_SIGN_IN_METHOD,
          by === 'self'
            ? 'This is your only way to sign in: set a password or link another provider first'
            : "This is the user's only way to sign in: they must set a password or link another provider first",
        );
      }
      await accounts.remove(target.id, t);
      await deps.audit.record({ type: 'social.unlinked', userId, details: by === 'admin' ? { provider, by } : { provider } }, { tx: t });
    });
  }
}
