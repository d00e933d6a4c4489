/**
 * The ModuleContext type: what a module gets from core (built by createModuleContext in
 * module-context.ts). Each member is listed in docs/architecture.md's ModuleContext table, and
 * test/unit/module-context-api.test.ts keeps the two the same.
 *
 * There is no way to a full session here but `signIn` (the sign-in seam, which runs the second
 * factor) and `sessions.activate` (after the second factor): test/unit/module-context-api.test.ts and
 * test/integration/module-account-state.test.ts.
 */
import type { Request, Response } from 'express';
import type { Model, ModelAttributes, ModelOptions, ModelStatic } from 'sequelize';
import type { UserFieldDef } from '../data/models/user.model.js';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserFlagWhere, UserRecord } from '../data/repositories/user-repository.js';
import type { Transaction } from '../data/unit-of-work.js';
import type { LimitResult } from '../limits/rate-limiter.js';
import type { Logger } from '../log/logger.js';
import type { ErasureResult, exportAccount } from '../services/account-data.js';
import type { PublicUser } from '../services/user-view.js';
import type { SignInOptions, SignInResult } from '../services/sign-in.js';
import type { HookPayload, SignInClient, SignInMethod } from './hooks.js';

export interface ModuleUsers {
  /** A user by id (deleted ones with includeDeleted), or null. */
  find(id: string, opts?: { includeDeleted?: boolean; tx?: Transaction }): Promise<UserRecord | null>;
  findByEmail(email: string): Promise<UserRecord | null>;
  /** Several users by id in one read (deleted ones with includeDeleted); missing ones are left out. */
  findMany(ids: readonly string[], opts?: { includeDeleted?: boolean }): Promise<UserRecord[]>;
  /**
   * The user service's one writer: inside `tx` when given; caches and 'user.updated' follow the commit.
   * Email, password, role, deletion and the account state (disabled, verified, second factor) have
   * their own flows and are refused here.
   */
  patch(id: string, values: Partial<UserRecord>, opts?: { tx?: Transaction }): Promise<UserRecord>;
  /**
   * Turns the user's second factor on or off (users.two_factor), like patch: inside `tx` when given,
   * announced after the commit. Only a module that provides the second factor (its manifest answers
   * 'auth.two_factor.methods') may call it.
   */
  setTwoFactor(id: string, on: boolean, opts?: { tx?: Transaction }): Promise<UserRecord>;
  /**
   * The module's own user fields (its manifest's userFields) of one user, typed by the field types, even
   * while the module is uninstalled with its data kept; null when there is no such user.
   */
  ownFields(userId: string): Promise<Record<string, unknown> | null>;
  /** Ids of the live users with these flags (e.g. `{ two_factor: true }`), inside `tx` when given. */
  idsWhere(where: UserFlagWhere, opts?: { tx?: Transaction }): Promise<string[]>;
  /** Sets the module's own user fields to NULL (erasure), inside `tx` when given. */
  clearOwnFields(userId: string, opts?: { tx?: Transaction }): Promise<void>;
  /** The spec's User object (write-only fields never). */
  toPublic(user: UserRecord): PublicUser;
  /** Whether `password` is the user's password (bcrypt, constant time); false without one. */
  verifyPassword(user: UserRecord, password: string): Promise<boolean>;
  /**
   * Core's ways into the account besides the module's own (a module that is a way in, such as passkeys,
   * must not remove the last one): whether it has a password, and how many linked social accounts can sign in
   * now (0 while social login is off).
   */
  waysIn(userId: string): Promise<{ password: boolean; social: number }>;
}

export interface ModuleSessions {
  /**
   * Turns a pending two-factor session into a full one (same id and token) through the sign-in seam:
   * counted as a login and followed by the 'auth.login' hooks with `method`; null when it is gone.
   */
  activate(sessionId: string, opts: { user: UserRecord; method: SignInMethod }): Promise<SessionRecord | null>;
  /** Every session of the user but `exceptSessionId`; returns how many. */
  revokeAll(userId: string, opts?: { exceptSessionId?: string; tx?: Transaction }): Promise<number>;
}

export interface ModuleSignInAttempts {
  /**
   * Takes one attempt of `user`'s budget before the proof is checked; throws 429 RATE_LIMITED (with
   * retry_after) while the account backs off, as POST /auth/login does, and 503 when the backoff's store
   * fails. Then exactly one of `failed()` (counts as a failed password) or `succeeded()`.
   */
  reserve(user: UserRecord, client: SignInClient): Promise<{ failed(): Promise<void>; succeeded(): Promise<void> }>;
}

export interface ModuleHooks {
  /** Raises an event (the module's own, namespaced `<id>.<what>`, or a catalogue event). */
  run<E extends string>(event: E, payload: HookPayload<E>): Promise<void>;
}

export interface ModuleDb {
  readonly dialect: 'sqlite' | 'postgres';
  /** A model over one of the module's own tables (declared in the manifest's `tables`); defined once. */
  model(name: string, table: string, attributes: ModelAttributes, options?: Omit<ModelOptions, 'tableName' | 'sequelize'>): ModelStatic<Model>;
  /** A unit of work: everything given `tx` commits or rolls back together. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * Rows of one SQL statement (`?` placeholders on both dialects) that names only the module's own
   * tables (or objects named after them, such as `<table>_fts`); any other table throws.
   */
  select<T = Record<string, unknown>>(sql: string, params?: unknown[], opts?: { tx?: Transaction }): Promise<T[]>;
  /** A statement on the module's own tables, under the same rule as select. */
  exec(sql: string, params?: unknown[], opts?: { tx?: Transaction }): Promise<void>;
}

export interface ModuleMail {
  /** Sends one of the module's messages (modules/<id>/emails/<lang>/<template>.html|.txt) in the user's language. */
  send(msg: { to: string; template: string; lang?: string | null; data: Record<string, string | number | undefined> }): Promise<void>;
}

export interface ModuleKeys {
  /** A 32-byte key for `purpose`, derived (HKDF-SHA256) from the server's secrets and the module id. */
  derive(purpose: string): Buffer;
  /** AES-256-GCM with the derived key: `v1.<iv>.<tag>.<ciphertext>` (base64url). */
  seal(plain: string, purpose: string): string;
  /** Opens what seal produced; throws on anything tampered with. */
  open(sealed: string, purpose: string): string;
}

export interface ModuleLimits {
  /**
   * One hit on one of the module's declared classes; fails open when the store is down. `rule`
   * replaces the declared default (a budget the module's own settings choose).
   */
  consume(cls: string, key: string, rule?: { points: number; durationSec: number }): Promise<LimitResult>;
  /** Gives back one hit (an attempt that turned out to be good). */
  refund(cls: string, key: string): Promise<void>;
  /** As consume, throwing 429 RATE_LIMITED (with retry_after) when the budget is spent. */
  check(cls: string, key: string): Promise<void>;
}

/**
 * The app's cache (Redis when configured, else this process's memory), with the module's keys kept
 * apart (`module:<id>:`). Values are strings; a read while Redis is down is a miss, a write is skipped.
 */
export interface ModuleCache {
  /** True when every instance shares it (Redis); false when it is this process's own. */
  readonly shared: boolean;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSec: number): Promise<void>;
  /** Sets the key only where it is missing (SET NX); false when it was there or the store is down. */
  add(key: string, value: string, ttlSec: number): Promise<boolean>;
  del(...keys: string[]): Promise<void>;
}

/**
 * The module's own security events (declared in its manifest's `auditEvents`), written to core's record;
 * the second-factor provider (the module answering 'auth.two_factor.methods', as for setTwoFactor) also
 * writes core's `two_factor.*` family and `sign_in.failed` (a wrong second-factor code).
 */
export interface ModuleAudit {
  /**
   * Writes one event in `tx` (it commits with the change, or neither does), else in a unit of work of
   * its own; actor, ip, agent and request id come from the request being answered. A type the manifest
   * does not declare throws.
   */
  record(
    event: { type: string; outcome?: 'success' | 'failure'; userId?: string | null; details?: Record<string, unknown> },
    opts?: { tx?: Transaction },
  ): Promise<void>;
  /** For what is not a change (a refusal): written after the answer, never throws. */
  recordLater(event: { type: string; outcome?: 'success' | 'failure'; userId?: string | null; details?: Record<string, unknown> }): void;
}

export interface ModulePersonalData {
  /** Everything stored about a user: core and every module with data. */
  exportAll(userId: string): Promise<Awaited<ReturnType<typeof exportAccount>>>;
  /** Erases a user everywhere in one transaction (`within` joins it); sessions end after the commit. */
  erase(userId: string, reason: string, within?: (tx: Transaction, erased: string[]) => Promise<void>): Promise<ErasureResult>;
}

/**
 * What a module gets from core: the only way in. Modules import nothing from core but
 * src/module-api.ts, and never see the AppContext, sequelize, models, repositories or Redis.
 */
export interface ModuleContext {
  readonly id: string;
  readonly logger: Logger;
  /** The module's settings: its config schema's defaults with the stored overrides applied. */
  config<T = Record<string, unknown>>(): T;
  /** What messages and links need: product name and public addresses. */
  readonly site: { productName: string; publicBaseUrl: string; appUrl: string };
  readonly users: ModuleUsers;
  readonly sessions: ModuleSessions;
  /**
   * The one sign-in seam (see services/sign-in.ts): full or pending two-factor session, hooks. `opts.factors: 2`
   * (the proof was two factors at once: a user-verified passkey) gives a two-factor user a full session;
   * only a module whose manifest declares `provesTwoFactors` may pass it. `opts.amr` and `opts.details`
   * go into the `sign_in.succeeded` event.
   */
  signIn(user: UserRecord, method: SignInMethod, client?: SignInClient, opts?: SignInOptions): Promise<SignInResult>;
  /**
   * The per-account failed-sign-in budget of password logins (core's login backoff, keyed by the user's
   * email and the caller's network), for a module that checks a proof of a known user (a passkey
   * assertion, at sign-in or as a second factor).
   */
  readonly signInAttempts: ModuleSignInAttempts;
  /** What core's login routes read of a request for `signIn`: address, user agent, device id, trusted-device token. */
  signInClient(req: Request): SignInClient;
  /**
   * The answer of POST /auth/login for a `signIn` result, the same body and session cookie (a pending
   * two-factor session included), so a module's sign-in route answers as login does.
   */
  signInAnswer(res: Response, result: SignInResult): Promise<Record<string, unknown>>;
  readonly hooks: ModuleHooks;
  readonly mail: ModuleMail;
  readonly sms: { send(to: string, text: string): Promise<void> };
  readonly db: ModuleDb;
  readonly cache: ModuleCache;
  readonly limits: ModuleLimits;
  readonly keys: ModuleKeys;
  /** bcrypt at the server's cost, for secrets the module keeps (a post password); verify is constant-time and false without a hash. */
  readonly passwords: { hash(plain: string): Promise<string>; verify(plain: string, hash: string | null): Promise<boolean> };
  /** Other modules, as far as a module may know them. */
  readonly modules: { isInstalled(id: string): boolean; isEnabled(id: string): boolean; userFields(moduleId: string): UserFieldDef[] };
  readonly personalData: ModulePersonalData;
  readonly audit: ModuleAudit;
  /** Ends the browser's cookie session on this answer (after the account it belonged to is gone). */
  clearSessionCookie(res: Response): void;
  /** HttpOnly cookies with core's attributes (Secure on https, the configured SameSite). */
  readonly cookies: {
    /** The session cookie, e.g. after a pending session became a full one. */
    setSession(res: Response, token: string, expiresAt: Date): void;
    set(res: Response, name: string, value: string, expiresAt: Date): void;
    clear(res: Response, name: string): void;
  };
}
