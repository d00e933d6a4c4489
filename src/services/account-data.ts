import type { Sequelize } from 'sequelize';
import type { AuditService } from '../audit/audit-service.js';
import { ownView } from '../audit/own-view.js';
import { ERASED_USER_COLUMNS, EXPORTED_USER_COLUMNS, RESET_ON_ERASURE } from '../data/models/user-columns.js';
import type { AuthTokenRepository } from '../data/repositories/auth-token-repository.js';
import type { SessionRepository } from '../data/repositories/session-repository.js';
import type { UserRepository } from '../data/repositories/user-repository.js';
import type { Transaction } from '../data/unit-of-work.js';
import type { Logger } from '../log/logger.js';
import type { Hooks } from '../modules/hooks.js';
import type { PictureService } from './picture-service.js';
import type { SessionService } from './session-service.js';
import type { UserService } from './user-service.js';

/** What the export and the erasure work with: core's stores and services, and the modules' exporters and erasers. */
export interface PersonalDataDeps {
  sequelize: Pick<Sequelize, 'transaction'>;
  repos: {
    users: Pick<UserRepository, 'findById'>;
    sessions: Pick<SessionRepository, 'listByUser'>;
    authTokens: Pick<AuthTokenRepository, 'listByUser' | 'deleteByUser'>;
  };
  services: {
    users: Pick<UserService, 'patch'>;
    sessions: Pick<SessionService, 'revokeAllForUser' | 'invalidateUser'>;
    pictures: Pick<PictureService, 'discard'>;
    audit: Pick<AuditService, 'exportFor' | 'anonymize'>;
  };
  hooks: Pick<Hooks, 'run'>;
  logger: Logger;
  /** The module runtime: exporters and erasers of every module with data (src/modules/runtime.ts). */
  modules: {
    exporters(): { module: string; name: string; run(userId: string): Promise<unknown> }[];
    erasers(): { module: string; name: string; erase(userId: string, tx: Transaction): Promise<void> }[];
    isEnabled(id: string): boolean;
  };
}

/**
 * Personal data across core and every module with data: one export, one erasure. A module's
 * routes and commands call these through its context (ModuleContext.personalData); any module's exporters and erasers
 * take part (installed, switched off, or uninstalled with their data kept).
 */

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v);
const plainRow = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, iso(v)]));

/**
 * What core stores about a user: the user row (no password hash), sessions (no token hashes), token
 * metadata, and the security events about them, oldest first, as they see them in their account (no
 * other person's id or address: src/audit/own-view.ts).
 */
export async function exportCore(app: PersonalDataDeps, userId: string) {
  // Through the repository, so booleans, JSON and dates come back typed on both dialects.
  const record = await app.repos.users.findById(userId, { includeDeleted: true });
  const user = record ? Object.fromEntries(EXPORTED_USER_COLUMNS.map((c) => [c, record[c] ?? null])) : null;
  const sessions = await app.repos.sessions.listByUser(userId);
  const tokens = await app.repos.authTokens.listByUser(userId);
  const events = await app.services.audit.exportFor(userId);
  return {
    user: user ? plainRow(user) : null,
    // Every column but the hashes of secrets (session token, one-time token and code).
    sessions: sessions.map(({ token_hash: _secret, ...rest }) => plainRow(rest as Record<string, unknown>)),
    auth_tokens: tokens.map(({ token_hash: _t, code_hash: _c, ...rest }) => plainRow(rest)),
    security_events: events.map((e) => ownView(e, userId)),
  };
}

/** The ways a person was named in sign-in attempts (an unknown account's identifier), as the sign-in normalises them. */
function identifiersOf(user: { email?: string | null; phone?: string | null; recovery_email?: string | null } | null): string[] {
  const all = [user?.email, user?.recovery_email, user?.phone].filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  return [...new Set(all.flatMap((v) => [v, v.trim().toLowerCase()]))];
}

/** Anonymizes the user row and deletes one-time tokens; sessions are revoked after commit (caches too). */
export async function eraseCore(app: PersonalDataDeps, userId: string, reason: string, tx: Transaction): Promise<void> {
  const now = new Date();
  // The row stays (anonymized) so foreign keys and audit history hold; user-columns.ts says what is cleared.
  const cleared = Object.fromEntries(ERASED_USER_COLUMNS.map((c) => [c, null]));
  await app.services.users.patch(
    userId,
    { ...cleared, ...RESET_ON_ERASURE, email: `deleted-${userId}@invalid`, deleted_at: now, deletion_reason: reason },
    { tx },
  );
  await app.repos.authTokens.deleteByUser(userId, { tx });
}

export interface ErasureResult {
  user_id: string;
  /** 'core', then each module whose eraser ran. */
  erased: string[];
}

/**
 * Erases a user across every module with data and core, in one transaction (`within` joins it, e.g.
 * to record proof of the erasure); then, after the commit, revokes the sessions everywhere, drops
 * caches, deletes the uploaded picture file and runs 'user.erased'.
 */
export async function eraseAccount(
  app: PersonalDataDeps,
  userId: string,
  reason: string,
  within?: (tx: Transaction, erased: string[]) => Promise<void>,
): Promise<ErasureResult> {
  const erased = ['core'];
  // The stored picture is personal data too; the row is read fresh (the caller's copy may be cached).
  const picture = (await app.repos.users.findById(userId))?.picture ?? null;
  await app.sequelize.transaction(async (tx) => {
    const identifiers = identifiersOf(await app.repos.users.findById(userId, { includeDeleted: true, tx }));
    for (const { module, erase } of app.modules.erasers()) {
      await erase(userId, tx);
      if (!erased.includes(module)) erased.push(module);
    }
    await eraseCore(app, userId, reason, tx);
    await within?.(tx, erased);
    // Security events stay (what happened to the account, and when, is the operator's record), but the
    // address, agent and identifier in them go: those name the person (docs/audit.md). Last, so the
    // events the erasure itself writes (a module's proof of it, in `within`) lose them too.
    await app.services.audit.anonymize(userId, identifiers, { tx });
  });
  await app.services.sessions.revokeAllForUser(userId);
  await app.services.sessions.invalidateUser(userId);
  // After the commit: a rolled-back erasure must not have lost the file.
  await app.services.pictures.discard(userId, picture);
  await app.hooks.run('user.erased', { user_id: userId }).catch((err) => app.logger.warn({ err: (err as Error).message }, 'user.erased hook failed'));
  return { user_id: userId, erased };
}

/** Everything stored about a user: core, then each module with data (its own exporters). */
export async function exportAccount(app: PersonalDataDeps, userId: string) {
  const modules: Record<string, Record<string, unknown>> = {};
  for (const { module, name, run } of app.modules.exporters()) {
    try {
      (modules[module] ??= {})[name] = await run(userId);
    } catch (err) {
      // A module uninstalled while the export ran has no data left to export.
      if (app.modules.isEnabled(module)) throw err;
    }
  }
  return { generated_at: new Date().toISOString(), user_id: userId, core: await exportCore(app, userId), modules };
}
