import { randomUUID } from 'node:crypto';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserFlagWhere, UserListQuery, UserRecord, UserRepository } from '../data/repositories/user-repository.js';
import { AppError, badRequest, forbidden, notFound } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import type { Logger } from '../log/logger.js';
import type { Hooks } from '../modules/hooks.js';
import { isUniqueViolation } from '../data/db-errors.js';
import type { Transaction } from '../data/unit-of-work.js';
import { afterCommit, inTransaction } from '../data/unit-of-work.js';
import { runAfterHooks } from './after-hooks.js';
import { invalidInput } from '../errors/zod-issues.js';
import { parseProfileInput, type ProfileModule } from './profile-input.js';
import type { SessionService } from './session-service.js';
import { assertNoContextWords, assertPasswordPolicy, personalWords, type PasswordHasher } from './security/passwords.js';
import { adminUpdateSchema, createUserSchema, type AdminUpdate, type AdminUpdateInput, type CreateUserInput, type NewUser } from './user-fields.js';
import { toPublicUser, type PublicUser } from './user-view.js';
import { adminChanges, assertMayCreateRole, isSuper } from './user-admin.js';
import { createdEvent, patchEvent, patchMayBeAudited, type CreatedVia, type UserAudit } from './user-audit.js';

export type UserType = 'customer' | 'writer' | 'admin' | 'superadmin';
export type { AdminUpdate, AdminUpdateInput, CreateUserInput, NewUser, PublicUser };

export type UserListParams = UserListQuery;

export interface CreateUserOptions {
  actor: UserRecord | null;
  /** How the user came to be (`user.created` details.via). */
  via: CreatedVia;
  /** The identity provider of a social sign-up (`user.created` details.provider). */
  provider?: string;
  verified?: boolean;
  /** The insert joins this unit of work (a social sign-up writes the user and its linked account as one). */
  tx?: Transaction | null;
  /** A picture URL taken over from an identity provider (never client input). */
  picture?: string | null;
  /** When a password the caller made up for the user stops working (ASVS 6.4.1; `init`, `user create`). */
  passwordExpiresAt?: Date | null;
}

export interface UserService {
  /**
   * Validates (email format, password policy, user_name format and uniqueness; duplicates → 400 EMAIL_TAKEN / USER_NAME_TAKEN),
   * hashes and inserts. actor null = system (CLI, init, public registration). An actor who is not a
   * superadmin may create only a customer or a writer (ADMIN_GRANTABLE_ROLES, user-admin.ts): 403 before
   * anything is written. `verified` is the default of is_verified when the input
   * does not say.
   */
  create(input: CreateUserInput, opts: CreateUserOptions): Promise<UserRecord>;
  /** `create` for input `createUserSchema` has already parsed (the admin route's body): not parsed again. */
  createParsed(input: NewUser, opts: CreateUserOptions): Promise<UserRecord>;
  /**
   * The user `createParsed` would create, unsaved and with a fresh id: what a registration with a taken
   * email is answered with under REGISTRATION_ENUMERATION_SAFE (auth-service.ts), so both answers match.
   */
  draft(input: NewUser, opts: CreateUserOptions): UserRecord;
  /** The spec's User object (installed modules' fields included, write-only ones never). */
  toPublic(u: UserRecord): PublicUser;
  /** A live (not deleted) user, or 404 — malformed ids included. */
  get(id: string): Promise<UserRecord>;
  /** A page of users: total exact or estimated (totalExact), and the cursor of the next page. */
  list(params: UserListParams): Promise<{ users: UserRecord[]; total: number; totalExact: boolean; nextCursor: string | null }>;
  /** A user's own profile update (see parseProfileInput for what is refused). */
  updateProfile(user: UserRecord, input: unknown): Promise<UserRecord>;
  /**
   * An admin's update; a role or email change, or disabling, signs the user out everywhere. Only a
   * superadmin actor (or the system) changes a role: an admin's request that would is refused whole (403).
   */
  adminUpdate(actor: UserRecord | null, id: string, input: AdminUpdateInput): Promise<UserRecord>;
  /** `adminUpdate` for input `adminUpdateSchema` has already parsed (the admin route's body): not parsed again. */
  adminUpdateParsed(actor: UserRecord | null, id: string, input: AdminUpdate): Promise<UserRecord>;
  /** Soft delete: the row stays (with reason), sessions are revoked. */
  softDelete(actor: UserRecord | null, id: string, reason?: string | null): Promise<UserRecord>;
  /**
   * The one way to change a users row: writes `values` (inside `tx` when given), then — once that
   * commits — drops cached copies and runs the 'user.updated' hooks, once. Unique-index races answer
   * the same 400 as the pre-checks. 404 when the user does not exist.
   */
  patch(id: string, values: Partial<UserRecord>, opts?: { tx?: Transaction | null }): Promise<UserRecord>;
  /**
   * The writer's path for a module's own columns when the model may not know them (the module was
   * uninstalled with its data kept): sets them to NULL; caches and 'user.updated' follow the commit.
   */
  clearColumns(id: string, columns: string[], opts?: { tx?: Transaction | null }): Promise<void>;
  /** Ids of the live users matching `where` (a module's guard: who has two-factor on). */
  idsWhere(where: UserFlagWhere, opts?: { tx?: Transaction | null }): Promise<string[]>;
  /**
   * Sets a new password (policy checked) and revokes every session but `exceptSessionId`, in one
   * transaction; the kept session is re-stamped so the password-change check lets it live.
   */
  setPassword(id: string, password: string, opts?: SetPasswordOptions): Promise<UserRecord>;
  listSessions(userId: string): Promise<SessionRecord[]>;
  revokeSession(actor: UserRecord | null, userId: string, sessionId: string): Promise<void>;
  revokeAllSessions(actor: UserRecord | null, userId: string): Promise<number>;
  /**
   * The user ends one of their own other sessions ("sign out this one" on the account page): 404 for
   * a session that is not theirs or is the one asking (that one signs out). `session.revoked`, by: user.
   */
  revokeOwnSession(user: Pick<UserRecord, 'id'>, sessionId: string, currentSessionId: string): Promise<void>;
  /** The user ends every session but the one asking ("sign out everywhere else"); returns how many. */
  revokeOtherSessions(user: Pick<UserRecord, 'id'>, currentSessionId: string): Promise<number>;
}

export interface SetPasswordOptions {
  /** The caller's own session, kept (re-stamped); every other session ends. */
  exceptSessionId?: string;
  /**
   * The security event written in the change's transaction: `password.changed` (default) or
   * `password.reset` (a reset link); `details` are added (never the password).
   */
  event?: { type: 'password.changed' | 'password.reset'; details?: Record<string, unknown> };
}

export interface UserServiceDeps {
  users: UserRepository;
  sessions: Pick<SessionService, 'invalidateUser' | 'revokeAllForUser' | 'revokeById' | 'listForUser' | 'restamp'>;
  passwords: PasswordHasher;
  /** This deployment's words a password must not be built on (`siteWords`: the product name, the host). */
  passwordWords?: readonly string[];
  hooks: Hooks;
  /** The module runtime: which modules are installed, and what the registry's manifests say of profile fields. */
  modules: { isInstalled(id: string): boolean; registry(): readonly ProfileModule[] };
  /** Opens a unit of work (sequelize.transaction). */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /** The security-event record: each change's event is written in the change's unit of work (user-audit.ts). */
  audit: UserAudit;
  clock?: () => Date;
  /** Where failing after-event hooks are reported. */
  logger?: Logger;
}

const ID_RE = /^[A-Za-z0-9-]{1,64}$/;

// The spec's error table has 400 for invalid input and no 409; the code tells which field is taken.
const emailTaken = () => badRequest('Email already registered', undefined, Codes.EMAIL_TAKEN);
const userNameTaken = () => badRequest('User name already taken', undefined, Codes.USER_NAME_TAKEN);

/** Maps a unique-index race (two inserts passing the pre-check at once) to the 400 the pre-check gives. */
function uniqueViolation(err: unknown): AppError | null {
  if (!isUniqueViolation(err)) return null;
  const e = err as { fields?: Record<string, unknown> | string[]; original?: { message?: string } };
  const text = JSON.stringify(e.fields ?? '') + (e.original?.message ?? '');
  return /user_name/.test(text) ? userNameTaken() : emailTaken();
}

/** The row `createParsed` writes for `input` (the repository canonicalises the email). */
function newUserRow(input: NewUser, opts: CreateUserOptions, passwordHash: string | null, now: Date) {
  return {
    id: randomUUID(),
    email: input.email,
    name: input.name ?? null,
    last_name: input.last_name ?? null,
    user_name: input.user_name ?? null,
    user_type: input.user_type ?? 'customer',
    phone: input.phone ?? null,
    title: input.title ?? null,
    lang: input.lang ?? null,
    is_verified: input.is_verified ?? opts.verified ?? false,
    password_hash: passwordHash,
    password_changed_at: input.password ? now : null,
    password_expires_at: input.password ? (opts.passwordExpiresAt ?? null) : null,
    picture: opts.picture ?? null,
    metadata: {},
    created_at: now,
    updated_at: now,
  };
}

export function createUserService(deps: UserServiceDeps): UserService {
  const clock = deps.clock ?? (() => new Date());
  const { users, sessions, hooks, audit } = deps;
  /** Joins the caller's unit of work, or opens one: a change and its event commit together. */
  const inTx = <T>(tx: Transaction | null | undefined, fn: (tx: Transaction) => Promise<T>) =>
    inTransaction(<U>(open: (t: Transaction) => Promise<U>) => deps.transaction(open), tx, fn);

  async function assertEmailFree(email: string, exceptId?: string): Promise<void> {
    const existing = await users.findByEmail(email, { includeDeleted: true });
    if (existing && existing.id !== exceptId) throw emailTaken();
  }
  async function assertUserNameFree(userName: string | null | undefined, exceptId?: string): Promise<void> {
    if (userName && (await users.userNameTaken(userName, exceptId))) throw userNameTaken();
  }
  /** Admins manage everyone but superadmins; the system and superadmins manage everyone. */
  function assertCanManage(actor: UserRecord | null, target: UserRecord): void {
    if (actor && isSuper(target) && !isSuper(actor)) throw forbidden('Only a superadmin can manage a superadmin');
  }
  async function write(id: string, patch: Partial<UserRecord>, tx?: Transaction | null): Promise<UserRecord> {
    try {
      const updated = await users.update(id, patch, { tx });
      if (!updated) throw notFound('User not found');
      return updated;
    } catch (err) {
      throw uniqueViolation(err) ?? err;
    }
  }
  const report = (event: string) => (err: unknown) =>
    deps.logger?.error({ event, reason: (err as Error)?.message ?? String(err) }, 'work after a committed user change failed');
  /** After the commit: caches first (so a hook reading the user sees the change), then the hooks. */
  function changed(user: UserRecord, tx: Transaction | null | undefined): Promise<void> {
    return afterCommit(
      tx,
      async () => {
        await sessions.invalidateUser(user.id);
        await runAfterHooks(hooks, deps.logger, 'user.updated', { user });
      },
      tx ? report('user.updated') : undefined,
    );
  }

  const admin = adminChanges({
    deps,
    get: (id) => service.get(id),
    assertCanManage,
    assertEmailFree,
    assertUserNameFree,
    write,
    changed,
    report,
    clock,
  });

  const service: UserService = {
    create(raw, opts) {
      const parsed = createUserSchema.safeParse(raw);
      return parsed.success ? service.createParsed(parsed.data, opts) : Promise.reject(invalidInput(parsed.error));
    },

    async createParsed(input, opts) {
      const userType = input.user_type ?? 'customer';
      assertMayCreateRole(opts.actor, userType);
      if (input.password !== undefined && input.password !== null) {
        assertPasswordPolicy(input.password);
        assertNoContextWords(input.password, [...(deps.passwordWords ?? []), ...personalWords(input)]);
      }
      // Hashed before the checks: a taken email costs the bcrypt work a new account does, so the time
      // of a refusal does not tell a taken address from a free one (issue 52). The user name is checked
      // first, so a taken name is refused alike whatever the email (REGISTRATION_ENUMERATION_SAFE).
      const passwordHash = input.password ? await deps.passwords.hash(input.password) : null;
      await assertUserNameFree(input.user_name);
      await assertEmailFree(input.email);
      const now = clock();
      try {
        return await inTx(opts.tx, async (tx) => {
          const created = await users.create(newUserRow(input, opts, passwordHash, now), { tx });
          await audit.record(createdEvent(created, opts.via, opts.provider), { tx });
          return created;
        });
      } catch (err) {
        throw uniqueViolation(err) ?? err;
      }
    },

    draft(input, opts) {
      return users.build(newUserRow(input, opts, null, clock()));
    },

    toPublic: (u) => toPublicUser(u, users.extraFields()),

    async get(id) {
      const u = typeof id === 'string' && ID_RE.test(id) ? await users.findById(id) : null;
      if (!u) throw notFound('User not found');
      return u;
    },

    async list(params) {
      const { rows, ...page } = await users.list(params);
      return { users: rows, ...page };
    },

    async updateProfile(user, input) {
      const patch = parseProfileInput(input, {
        current: user,
        registry: deps.modules.registry(),
        isInstalled: (m) => deps.modules.isInstalled(m),
      });
      if (patch.user_name) await assertUserNameFree(patch.user_name, user.id);
      return Object.keys(patch).length ? service.patch(user.id, patch) : service.get(user.id);
    },

    async patch(id, values, opts = {}) {
      // Only what user-audit.ts counts as a change worth an event pays for a read and a unit of work.
      if (!patchMayBeAudited(values)) {
        const updated = await write(id, values, opts.tx);
        await changed(updated, opts.tx);
        return updated;
      }
      return inTx(opts.tx, async (tx) => {
        const before = await users.findById(id, { includeDeleted: true, tx });
        const updated = await write(id, values, tx);
        const event = patchEvent(before, values, id);
        if (event) await audit.record(event, { tx });
        await changed(updated, tx);
        return updated;
      });
    },

    idsWhere: (where, opts = {}) => users.idsWhere(where, { tx: opts.tx }),

    async clearColumns(id, columns, opts = {}) {
      await users.clearColumns(id, columns, { tx: opts.tx });
      const user = await users.findById(id, { includeDeleted: true, tx: opts.tx });
      if (user) await changed(user, opts.tx);
    },

    adminUpdate(actor, id, raw) {
      const parsed = adminUpdateSchema.safeParse(raw);
      return parsed.success ? service.adminUpdateParsed(actor, id, parsed.data) : Promise.reject(invalidInput(parsed.error));
    },

    adminUpdateParsed: (actor, id, parsed) => admin.update(actor, id, parsed),
    softDelete: (actor, id, reason) => admin.softDelete(actor, id, reason),

    async setPassword(id, password, opts = {}) {
      assertPasswordPolicy(password);
      const target = await service.get(id);
      assertNoContextWords(password, [...(deps.passwordWords ?? []), ...personalWords(target)]);
      const hash = await deps.passwords.hash(password);
      // Password and sign-out everywhere in one unit of work; were it cut short anyway, validation
      // refuses every session opened before password_changed_at (predatesPasswordChange).
      return deps.transaction(async (tx) => {
        const at = clock();
        const updated = await write(target.id, { password_hash: hash, password_changed_at: at, password_expires_at: null }, tx);
        if (opts.exceptSessionId) await sessions.restamp(opts.exceptSessionId, at, { tx });
        const revoked = await sessions.revokeAllForUser(target.id, opts.exceptSessionId, { tx });
        // The change, the sign-out elsewhere and their events commit together (or none of them does).
        const event = opts.event ?? { type: 'password.changed' as const };
        const details = { ...event.details, sessions_revoked: revoked, session_kept: Boolean(opts.exceptSessionId) };
        await deps.audit.record({ type: event.type, userId: target.id, details }, { tx });
        if (revoked > 0) await deps.audit.record({ type: 'session.revoked', userId: target.id, details: { count: revoked, reason: event.type } }, { tx });
        await afterCommit(tx, () => sessions.invalidateUser(target.id), report('password.changed'));
        return updated;
      });
    },

    async listSessions(userId) {
      return sessions.listForUser(userId);
    },

    revokeSession: (actor, userId, sessionId) => admin.revokeSession(actor, userId, sessionId),
    async revokeOwnSession(user, sessionId, currentSessionId) {
      const gone = () => notFound('Session not found');
      if (sessionId === currentSessionId || !ID_RE.test(sessionId)) throw gone();
      const owned = (await sessions.listForUser(user.id)).some((x) => x.id === sessionId);
      if (!owned) throw gone();
      await deps.transaction(async (tx) => {
        if (!(await sessions.revokeById(sessionId, { tx }))) throw gone();
        await deps.audit.record({ type: 'session.revoked', userId: user.id, details: { by: 'user', count: 1 } }, { tx });
      });
    },
    revokeOtherSessions: (user, currentSessionId) =>
      deps.transaction(async (tx) => {
        const revoked = await sessions.revokeAllForUser(user.id, currentSessionId, { tx });
        if (revoked > 0) await deps.audit.record({ type: 'session.revoked', userId: user.id, details: { by: 'user', count: revoked } }, { tx });
        return revoked;
      }),
    revokeAllSessions: (actor, userId) => admin.revokeAllSessions(actor, userId),
  };
  return service;
}
