import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Response } from 'express';
import { clearHttpOnlyCookie, clearSessionCookie, setHttpOnlyCookie, setSessionCookie } from '../http/cookies.js';
import { QueryTypes, type Model, type ModelAttributes, type ModelOptions, type ModelStatic } from 'sequelize';
import type { AppContext } from '../app-context.js';
import type { UserFieldDef } from '../data/models/user.model.js';
import type { SessionRecord, SessionStatus } from '../data/repositories/session-repository.js';
import type { UserFlagWhere, UserRecord } from '../data/repositories/user-repository.js';
import type { Transaction } from '../data/unit-of-work.js';
import { AppError } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import { consumeLimit, tooManyRequests } from '../http/middleware/rate-limit.js';
import type { LimitResult } from '../limits/rate-limiter.js';
import type { Logger } from '../log/logger.js';
import { findPackageRoot } from '../mail/package-root.js';
import { exportAccount, eraseAccount, type ErasureResult } from '../services/account-data.js';
import type { PublicUser } from '../services/user-view.js';
import type { SignInResult } from '../services/sign-in.js';
import type { ModuleManifest } from './define-module.js';
import { envLimit } from './module-env.js';
import type { HookMatcher, HookPayload, SignInClient, SignInMethod } from './hooks.js';

/** Columns a module may not write through users.patch: each has its own core flow. */
const PROTECTED_USER_COLUMNS = new Set([
  'id',
  'email',
  'password_hash',
  'password_changed_at',
  'user_type',
  'deleted_at',
  'deletion_reason',
  'created_at',
  'updated_at',
]);

export interface ModuleUsers {
  /** A live user, or 404. */
  get(id: string): Promise<UserRecord>;
  /** A user by id (deleted ones with includeDeleted), or null. */
  find(id: string, opts?: { includeDeleted?: boolean; tx?: Transaction }): Promise<UserRecord | null>;
  findByEmail(email: string): Promise<UserRecord | null>;
  /** Several users by id in one read (deleted ones with includeDeleted); missing ones are left out. */
  findMany(ids: readonly string[], opts?: { includeDeleted?: boolean }): Promise<UserRecord[]>;
  /**
   * The user service's one writer: inside `tx` when given; caches and 'user.updated' follow the commit.
   * Email, password, role and deletion have their own flows and are refused here.
   */
  patch(id: string, values: Partial<UserRecord>, opts?: { tx?: Transaction }): Promise<UserRecord>;
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
}

export interface ModuleSessions {
  /** Opens a session directly (prefer signIn, which runs the second factor and the sign-in hooks). */
  create(userId: string, opts?: SignInClient & { status?: SessionStatus; tx?: Transaction }): Promise<{ token: string; session: SessionRecord }>;
  /**
   * Turns a pending two-factor session into a full one (same id and token) through the sign-in seam:
   * counted as a login and followed by the 'auth.login' hooks with `method`; null when it is gone.
   */
  activate(sessionId: string, opts: { user: UserRecord; method: SignInMethod }): Promise<SessionRecord | null>;
  revoke(sessionId: string): Promise<boolean>;
  /** Every session of the user but `exceptSessionId`; returns how many. */
  revokeAll(userId: string, opts?: { exceptSessionId?: string; tx?: Transaction }): Promise<number>;
  list(userId: string): Promise<SessionRecord[]>;
}

export interface ModuleHooks {
  /** Subscribes for the module's lifetime (removed when it is switched off or uninstalled). */
  on<E extends string>(event: E, handler: (payload: HookPayload<E>) => Promise<void> | void, when?: HookMatcher<E>): void;
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
  reset(cls: string, key: string): Promise<void>;
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
  /** The one sign-in seam (see services/sign-in.ts): full or pending two-factor session, hooks. */
  signIn(user: UserRecord, method: SignInMethod, client?: SignInClient): Promise<SignInResult>;
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

/** A raw column value as its field type (SQLite answers 0/1 and strings). */
function typed(type: UserFieldDef['type'], v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'boolean') return v === true || v === 1 || v === '1' || v === 'true';
  if (type === 'date') return new Date(v as string);
  if (type === 'integer') return Number(v);
  return v;
}

/** Tables a statement names: after INTO and UPDATE, and after FROM and JOIN unless it is a function call (`FROM unnest(…)`). */
const TABLE_REF = /\b(?:(?:into|update)\s+([a-z_][a-z0-9_]*)\b|(?:from|join)\s+([a-z_][a-z0-9_]*)\b(?!\s*\())/gi;

/** Throws unless every table the statement names is one of `tables` or named after one (`<table>_…`). */
export function assertOwnTables(moduleId: string, tables: ReadonlySet<string>, sql: string): void {
  for (const m of sql.matchAll(TABLE_REF)) {
    const name = (m[1] ?? m[2])!.toLowerCase();
    if (tables.has(name) || [...tables].some((t) => name.startsWith(`${t}_`))) continue;
    throw new Error(`module ${moduleId} does not own table ${name} (declare it in the manifest's tables; users are read through ctx.users)`);
  }
}

const models = new WeakMap<object, Map<string, ModelStatic<Model>>>();

/** Builds the context of one module; `app` is read lazily so a context outlives nothing it should not. */
export function createModuleContext(app: AppContext, manifest: ModuleManifest): ModuleContext {
  const id = manifest.id;
  const logger = app.logger.child({ module: id });
  const tables = new Set(manifest.tables);
  const ownColumns = manifest.userFields.map((f) => f.name);
  // RATE_LIMIT_<CLASS> in the environment is the operator's word: it replaces the declared default
  // and any budget the module passes from its own settings.
  const fromEnv = new Map(manifest.rateLimits.map((r) => [r.name, envLimit(r.name, app.config.moduleEnv ?? {}).rule] as const).filter(([, rule]) => rule));
  const limits = new Map(manifest.rateLimits.map((r) => [r.name, fromEnv.get(r.name) ?? { points: r.points, durationSec: r.durationSec }]));
  const ruleOf = (cls: string) => {
    const rule = limits.get(cls);
    if (!rule) throw new Error(`module ${id}: rate-limit class ${cls} is not declared in its manifest`);
    return rule;
  };
  const emails = {
    dir: manifest.emailDir ?? path.join(findPackageRoot(), 'modules', id, 'emails'),
    required: Object.fromEntries(manifest.emails.map((e) => [e.name, { all: e.requires ?? [] }])),
  };
  const secret = () => {
    const s = app.config.cookieSecret ?? app.config.bridgeSecret;
    if (!s) throw new AppError(503, Codes.SERVICE_UNAVAILABLE, 'Server secrets are not configured (COOKIE_SECRET or BRIDGE_VALIDATION_SECRET)');
    return s;
  };
  const cachePrefix = `module:${id}:`;
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', secret(), 'gatehouse-module-keys', `${id}:${purpose}`, 32));

  const ctx: ModuleContext = {
    id,
    logger,
    config: <T>() => app.modules.config<T>(id),
    get site() {
      return { productName: app.config.productName, publicBaseUrl: app.config.publicBaseUrl, appUrl: app.config.appUrl ?? app.config.publicBaseUrl };
    },
    users: {
      get: (userId) => app.services.users.get(userId),
      find: (userId, opts) => app.repos.users.findById(userId, opts),
      findByEmail: (email) => app.repos.users.findByEmail(email),
      findMany: (ids, opts) => app.repos.users.findByIds(ids, opts),
      patch(userId, values, opts) {
        const refused = Object.keys(values).filter((k) => PROTECTED_USER_COLUMNS.has(k));
        if (refused.length) throw new Error(`module ${id} may not write ${refused.join(', ')} through users.patch`);
        return app.services.users.patch(userId, values, opts);
      },
      async ownFields(userId) {
        const row = await app.repos.users.readColumns(userId, ownColumns);
        if (!row) return null;
        return Object.fromEntries(manifest.userFields.map((f) => [f.name, typed(f.type, row[f.name])]));
      },
      idsWhere: (where, opts = {}) => app.services.users.idsWhere(where, { tx: opts.tx }),
      clearOwnFields: (userId, opts = {}) => app.services.users.clearColumns(userId, ownColumns, { tx: opts.tx }),
      toPublic: (u) => app.services.users.toPublic(u),
      verifyPassword: (u, password) => app.services.passwords.verify(password, u.password_hash ?? null),
    },
    sessions: {
      create: (userId, { tx, ...opts } = {}) => app.services.sessions.create(userId, opts, { tx }),
      activate: (sessionId, { user, method }) => app.services.signIn.completePending(user, sessionId, method),
      revoke: (sessionId) => app.services.sessions.revokeById(sessionId),
      revokeAll: (userId, opts = {}) => app.services.sessions.revokeAllForUser(userId, opts.exceptSessionId, { tx: opts.tx }),
      list: (userId) => app.services.sessions.listForUser(userId),
    },
    signIn: (user, method, client) => app.services.signIn.signIn(user, method, client),
    hooks: {
      on(event, handler, when) {
        app.hooks.on(event, handler, id, when);
      },
      run: (event, payload) => app.hooks.run(event, payload),
    },
    mail: {
      async send(msg) {
        await app.services.mailer.send({ ...msg, source: emails });
      },
    },
    sms: {
      async send(to, text) {
        await app.services.sms.send(to, text);
      },
    },
    db: {
      get dialect() {
        return app.dialect;
      },
      model(name, table, attributes, options = {}) {
        if (!tables.has(table)) throw new Error(`module ${id} does not own table ${table} (declare it in the manifest's tables)`);
        let byName = models.get(app.sequelize);
        if (!byName) models.set(app.sequelize, (byName = new Map()));
        const key = `${id}:${name}`;
        let m = byName.get(key);
        if (!m) {
          m = app.sequelize.define(name, attributes, { timestamps: false, ...options, tableName: table });
          byName.set(key, m);
        }
        return m;
      },
      transaction: (fn) => app.sequelize.transaction(fn),
      async select<T>(sql: string, params: unknown[] = [], opts: { tx?: Transaction } = {}) {
        assertOwnTables(id, tables, sql);
        return (await app.sequelize.query(sql, { replacements: params, type: QueryTypes.SELECT, transaction: opts.tx })) as T[];
      },
      async exec(sql, params = [], opts = {}) {
        assertOwnTables(id, tables, sql);
        await app.sequelize.query(sql, { replacements: params, transaction: opts.tx });
      },
    },
    cache: {
      get shared() {
        return app.cache.kind === 'redis';
      },
      get: (key) => app.cache.get(`${cachePrefix}${key}`),
      set: (key, value, ttlSec) => app.cache.set(`${cachePrefix}${key}`, value, ttlSec),
      add: (key, value, ttlSec) => app.cache.add(`${cachePrefix}${key}`, value, ttlSec),
      del: (...keys) => app.cache.del(...keys.map((k) => `${cachePrefix}${k}`)),
    },
    limits: {
      consume: async (cls, key, rule) => consumeLimit(app, cls, key, fromEnv.get(cls) ?? rule ?? ruleOf(cls)),
      refund: (cls, key) => (ruleOf(cls), app.limiter.refund(cls, key)),
      async check(cls, key) {
        if (!app.config.rateLimitsEnabled) return;
        const r = await consumeLimit(app, cls, key, ruleOf(cls));
        if (!r.allowed) throw tooManyRequests(r);
      },
      reset: (cls, key) => app.limiter.reset(cls, key),
    },
    keys: {
      derive,
      seal(plain, purpose) {
        const iv = randomBytes(12);
        const cipher = createCipheriv('aes-256-gcm', derive(purpose), iv);
        const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
        return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
      },
      open(sealed, purpose) {
        const [v, iv, tag, body] = sealed.split('.');
        if (v !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed value');
        const decipher = createDecipheriv('aes-256-gcm', derive(purpose), Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      },
    },
    passwords: {
      hash: (plain) => app.services.passwords.hash(plain),
      verify: (plain, hash) => app.services.passwords.verify(plain, hash),
    },
    modules: {
      isInstalled: (other) => app.modules.isInstalled(other),
      isEnabled: (other) => app.modules.isEnabled(other),
      userFields: (moduleId) => app.modules.userFields().filter((f) => f.module === moduleId),
    },
    personalData: {
      exportAll: (userId) => exportAccount(app, userId),
      erase: (userId, reason, within) => eraseAccount(app, userId, reason, within),
    },
    clearSessionCookie: (res) => clearSessionCookie(res, app.config),
    cookies: {
      setSession: (res, token, expiresAt) => setSessionCookie(res, app.config, token, expiresAt),
      set: (res, name, value, expiresAt) => setHttpOnlyCookie(res, app.config, name, value, expiresAt),
      clear: (res, name) => clearHttpOnlyCookie(res, app.config, name),
    },
  };
  return ctx;
}
