import path from 'node:path';
import { clearHttpOnlyCookie, clearSessionCookie, setHttpOnlyCookie, setSessionCookie } from '../http/cookies.js';
import { QueryTypes, type Model, type ModelStatic } from 'sequelize';
import { FLOW_OWNED_USER_COLUMNS } from '../data/models/user-columns.js';
import type { UserFieldDef } from '../data/models/user.model.js';
import type { Transaction } from '../data/unit-of-work.js';
import { AppError } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import { tooManyRequests } from '../http/middleware/rate-limit-request.js';
import { clientInfo, signInAnswer } from '../http/routes/auth-responses.js';
import { consumeFailingOpen } from '../limits/fail-open.js';
import { accountNetworkKey } from '../limits/login-policy.js';
import { THROTTLED_ONCE_PER_MS } from '../services/sign-in-audit.js';
import { createLimitClassTable, moduleLimitClass, type LimitClass, type LimitClassTable } from '../limits/limit-classes.js';
import { findPackageRoot } from '../mail/package-root.js';
import { exportAccount, eraseAccount } from '../services/account-data.js';
import type { ModuleManifest } from './define-module.js';
import type { ModuleContext } from './module-context-types.js';
import type { ModuleContextDeps } from './module-context-deps.js';
import { moduleKeys } from './module-keys.js';
import { assertOwnTables } from './module-sql.js';

export type * from './module-context-types.js';

/**
 * Columns a module may not write through users.patch, from their one declaration (user-columns.ts):
 * identity, email, password, role, deletion, timestamps and the account state (disabled, verified,
 * second factor) each have their own core flow.
 */
const PROTECTED_USER_COLUMNS = FLOW_OWNED_USER_COLUMNS;

/** The hook a second-factor provider answers: only such a module may switch `two_factor`. */
const SECOND_FACTOR_EVENT = 'auth.two_factor.methods';
/** Core event types the second-factor provider may write besides its own: the two_factor.* family and sign_in.failed. */
const SECOND_FACTOR_AUDIT = /^(two_factor\.[a-z_]+|sign_in\.failed)$/;

/** A raw column value as its field type (SQLite answers 0/1 and strings). */
function typed(type: UserFieldDef['type'], v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'boolean') return v === true || v === 1 || v === '1' || v === 'true';
  if (type === 'date') return new Date(v as string);
  if (type === 'integer') return Number(v);
  return v;
}

const models = new WeakMap<object, Map<string, ModelStatic<Model>>>();

/** Builds the context of one module; `app` is read lazily so a context outlives nothing it should not. */
export function createModuleContext(app: ModuleContextDeps, manifest: ModuleManifest): ModuleContext {
  const id = manifest.id;
  const logger = app.logger.child({ module: id });
  const tables = new Set(manifest.tables);
  const ownColumns = manifest.userFields.map((f) => f.name);
  // The module's classes, from the same table as core's (src/limits/limit-classes.ts), under
  // module:<id>:<name>: a module counts only in the classes its manifest declares.
  let ownLimits: LimitClassTable | undefined;
  const limitClass = (cls: string): LimitClass => {
    ownLimits ??= createLimitClassTable(app.config, [manifest]);
    const name = moduleLimitClass(id, cls);
    if (!ownLimits.has(name)) throw new Error(`module ${id}: rate-limit class ${cls} is not declared in its manifest`);
    return ownLimits.get(name);
  };
  const providesSecondFactor = manifest.hooks.some((h) => h.event === SECOND_FACTOR_EVENT);
  // A module writes only the event types its manifest declares (`<id>.<what>`); the second-factor
  // provider (the rule of setTwoFactor) also writes core's two_factor.* family and the sign-ins its
  // step refuses (sign_in.failed), which are core's catalogue so that any provider names them alike.
  const ownEvents = new Set(manifest.auditEvents.map((e) => e.type));
  const mayWrite = (type: string) => ownEvents.has(type) || (providesSecondFactor && SECOND_FACTOR_AUDIT.test(type));
  const ownEvent = <E extends { type: string }>(e: E): E => {
    if (!mayWrite(e.type)) {
      throw new Error(
        `module ${id}: audit event ${e.type} is not declared in its manifest's auditEvents${providesSecondFactor ? '' : " (core two_factor.* events are the second-factor provider's)"}`,
      );
    }
    return e;
  };
  // RATE_LIMIT_<CLASS> in the environment is the operator's word: it replaces the declared default
  // and any budget the module passes from its own settings.
  const ruleOf = (c: LimitClass, rule?: { points: number; durationSec: number }) => (c.fromOperator ? c.rule : (rule ?? c.rule));
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
  // Statements the guard passed (per module: the same text always names the same tables).
  const allowed = new Set<string>();
  const guard = (sql: string) => {
    if (allowed.has(sql)) return;
    assertOwnTables(id, tables, sql);
    if (allowed.size >= 2000) allowed.clear();
    allowed.add(sql);
  };

  const ctx: ModuleContext = {
    id,
    logger,
    config: <T>() => app.modules.config<T>(id),
    get site() {
      return { productName: app.config.productName, publicBaseUrl: app.config.publicBaseUrl, appUrl: app.config.appUrl ?? app.config.publicBaseUrl };
    },
    users: {
      find: (userId, opts) => app.repos.users.findById(userId, opts),
      findByEmail: (email) => app.repos.users.findByEmail(email),
      findMany: (ids, opts) => app.repos.users.findByIds(ids, opts),
      patch(userId, values, opts) {
        const refused = Object.keys(values).filter((k) => PROTECTED_USER_COLUMNS.has(k));
        if (refused.length) {
          const flows = [...new Set(refused.map((k) => PROTECTED_USER_COLUMNS.get(k)))].join(', ');
          throw new Error(`module ${id} may not write ${refused.join(', ')} through users.patch (their own flows: ${flows})`);
        }
        return app.services.users.patch(userId, values, opts);
      },
      setTwoFactor(userId, on, opts) {
        if (!providesSecondFactor) throw new Error(`module ${id} may not set two_factor: it does not provide the second factor (${SECOND_FACTOR_EVENT})`);
        return app.services.users.patch(userId, { two_factor: on }, opts);
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
      async waysIn(userId) {
        const [user, social] = await Promise.all([app.repos.users.findById(userId), app.services.social.usableLinkCount(userId)]);
        return { password: Boolean(user?.password_hash), social };
      },
    },
    sessions: {
      // Only the second-factor provider completes a second factor; the user is the stored one, and the
      // session must be that user's live pending session (session-service.ts activate).
      async activate(sessionId, { user, method }) {
        if (!providesSecondFactor) throw new Error(`module ${id} may not activate sessions: it does not provide the second factor (${SECOND_FACTOR_EVENT})`);
        const stored = await app.repos.users.findById(user.id);
        return stored ? app.services.signIn.completePending(stored, sessionId, method) : null;
      },
      revokeAll: (userId, opts = {}) => app.services.sessions.revokeAllForUser(userId, opts.exceptSessionId, { tx: opts.tx }),
    },
    // The user as stored, not as the caller describes it: a record with two_factor switched off in
    // memory must not skip the second factor. Two factors at once only from a module that declares it.
    async signIn(user, method, client, opts) {
      if (opts?.factors === 2 && !manifest.provesTwoFactors) {
        throw new Error(`module ${id} may not sign in with two factors: its manifest does not declare provesTwoFactors`);
      }
      const stored = await app.repos.users.findById(user.id);
      if (!stored) throw new AppError(401, Codes.INVALID_CREDENTIALS, 'Invalid credentials');
      return app.services.signIn.signIn(stored, method, client, opts);
    },
    signInAttempts: {
      // The password login's backoff key for this account from this network (limits/login-policy.ts).
      async reserve(user, client) {
        const key = accountNetworkKey(user.email ?? user.id, client.ip ?? '');
        const unavailable = () => new AppError(503, Codes.SERVICE_UNAVAILABLE, 'Sign-in is temporarily unavailable; try again shortly');
        const guarded = async <T>(op: () => Promise<T>): Promise<T> => {
          try {
            return await op();
          } catch {
            throw unavailable();
          }
        };
        const decision = await guarded(() => app.loginBackoff.reserve(key));
        if (!decision.allowed) {
          app.services.audit.recordLater(
            {
              type: 'sign_in.throttled',
              outcome: 'failure',
              userId: user.id,
              actor: null,
              details: { method: id, limit: 'account_backoff', retry_after: decision.retryAfterSec },
            },
            { oncePer: { key: `account_backoff|${key}`, ms: THROTTLED_ONCE_PER_MS } },
          );
          throw new AppError(429, Codes.RATE_LIMITED, 'Too many sign-in attempts for this account; try again later', undefined, {
            retry_after: decision.retryAfterSec,
          });
        }
        let done = false;
        const once = (op: () => Promise<void>) => async () => {
          if (done) return;
          done = true;
          await guarded(op);
        };
        return { failed: once(() => app.loginBackoff.recordFailure(key)), succeeded: once(() => app.loginBackoff.recordSuccess(key)) };
      },
    },
    signInClient: (req) => clientInfo(req),
    // Login's own answer and cookie (http/routes/auth-responses.ts).
    signInAnswer: (res, r) => signInAnswer(app, res, r),
    hooks: {
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
        guard(sql);
        return (await app.sequelize.query(sql, { replacements: params, type: QueryTypes.SELECT, transaction: opts.tx })) as T[];
      },
      async exec(sql, params = [], opts = {}) {
        guard(sql);
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
      async consume(cls, key, rule) {
        const c = limitClass(cls);
        return consumeFailingOpen(app, c.name, key, ruleOf(c, rule));
      },
      refund: async (cls, key) => app.limiter.refund(limitClass(cls).name, key),
      async check(cls, key) {
        const c = limitClass(cls);
        if (!app.config.rateLimitsEnabled) return;
        const r = await consumeFailingOpen(app, c.name, key, c.rule);
        if (!r.allowed) throw tooManyRequests(r);
      },
    },
    keys: moduleKeys(id, secret),
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
    audit: {
      async record(event, opts = {}) {
        await app.services.audit.record(ownEvent(event), { tx: opts.tx });
      },
      recordLater: (event) => app.services.audit.recordLater(ownEvent(event)),
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
