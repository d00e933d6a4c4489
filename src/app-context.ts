import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Sequelize } from 'sequelize';
import type { Config } from './config/schema.js';
import { closer, openSharedStores, within, type Closer, type SharedStores } from './app-stores.js';
import { createSequelize, databaseProbe, dialectOf, type Dialect } from './data/sequelize.js';
import { DatabaseHealth, guardDatabase } from './data/db-health.js';
import { createMigrator, type Migrator } from './data/migrator.js';
import { coreMigrations } from './data/migrations/index.js';
import { createUserRepository, type UserRepository } from './data/repositories/user-repository.js';
import { createSessionRepository, type SessionRepository } from './data/repositories/session-repository.js';
import { createAuthTokenRepository, type AuthTokenRepository } from './data/repositories/auth-token-repository.js';
import { createSettingsRepository, type SettingsRepository } from './data/repositories/settings-repository.js';
import { createAuditRepository, type AuditRepository } from './data/repositories/audit-repository.js';
import { createAuditService, type AuditService } from './audit/audit-service.js';
import { createWebhooks } from './webhooks/webhooks.js';
import { createOidc, type OidcService } from './oidc/oidc.js';
import type { WebhookService } from './webhooks/webhook-service.js';
import { createDeferredWork } from './services/deferred-work.js';
import { createSecurityNotices } from './audit/security-notices.js';
import { createNewDeviceDetector } from './audit/new-device.js';
import { createAccountNotifier } from './services/account-notify.js';
import { defineSystemModels, type SystemModels } from './data/models/system.models.js';
import { createLogger, type Logger } from './log/logger.js';
import { createRefusalLog, type RefusalLog } from './log/refusal-log.js';
import { createSessionService, type SessionService } from './services/session-service.js';
import { createPasswordHasher, siteWords, type PasswordHasher } from './services/security/passwords.js';
import { createUserService, type UserService } from './services/user-service.js';
import { createAuthService, type AuthService } from './services/auth-service.js';
import { createPictureService, type PictureService } from './services/picture-service.js';
import { createAccountFlows, type AccountFlows } from './services/account-flows.js';
import { createSignIn, type SignInService } from './services/sign-in.js';
import { createSocialService, type SocialService } from './social/social-service.js';
import { createSocialStores } from './social/social-stores.js';
import { createHooks, type Hooks } from './modules/hooks.js';
import type { ModuleRuntime } from './modules/runtime.js';
import { createModuleRuntime } from './modules/hub/module-runtime.js';
import { createModuleContext } from './modules/module-context.js';
import type { ModuleContextDeps } from './modules/module-context-deps.js';
import type { ModuleManifest } from './modules/define-module.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { timedHasher, watchCounts } from './metrics/app-metrics.js';

export interface Services {
  sessions: SessionService;
  passwords: PasswordHasher;
  users: UserService;
  auth: AuthService;
  pictures: PictureService;
  mailer: AccountFlows['mailer'];
  sms: AccountFlows['sms'];
  tokens: AccountFlows['tokens'];
  verification: AccountFlows['verification'];
  passwordFlows: AccountFlows['passwordFlows'];
  emailChange: AccountFlows['emailChange'];
  /** The one sign-in seam: every way of signing in ends here (services/sign-in.ts). */
  signIn: SignInService;
  tokenLogin: AccountFlows['tokenLogin'];
  deferred: AccountFlows['deferred'];
  /** Social login (src/social). */
  social: SocialService;
  /** The security-event record (src/audit): the one writer of audit_events. */
  audit: AuditService;
  /** Signed webhooks (src/webhooks): endpoints, the outbox written with each event, the delivery worker. */
  webhooks: WebhookService;
  /** Gatehouse as an OpenID provider (src/oidc, docs/oidc.md): clients, keys, the provider. */
  oidc: OidcService;
}

/** Everything a request, a job or a CLI command needs, wired once. */
export interface AppContext extends SharedStores {
  /** Unique per process: tells instances apart in locks and logs. */
  instanceId: string;
  config: Config;
  logger: Logger;
  sequelize: Sequelize;
  dialect: Dialect;
  models: SystemModels;
  /** Whether the database is usable right now; while it is not, queries are refused at once (503). */
  dbHealth: DatabaseHealth;
  /** The one writer of each core table (users, sessions, auth_tokens, settings). */
  repos: { users: UserRepository; sessions: SessionRepository; authTokens: AuthTokenRepository; settings: SettingsRepository; audit: AuditRepository };
  migrator: Migrator;
  hooks: Hooks;
  modules: ModuleRuntime;
  services: Services;
  /** Prometheus metrics of this process (src/metrics). */
  metrics: Metrics;
  /** Rate-limit refusals in the log: one line per client address and class per minute, with the count (src/log/refusal-log.ts). */
  refusals: RefusalLog;
  /**
   * Closes everything it opened, in order, each step bounded: whatever the state of the database,
   * Redis and SMTP, it resolves within `withinMs` (default 15 s).
   */
  close(opts?: { withinMs?: number }): Promise<void>;
}

export interface CreateAppContextOptions {
  logger?: Logger;
  clock?: () => Date;
  /**
   * Modules that can be installed, given by the composition root (entry/cli.ts; tests their own):
   * core imports no module.
   */
  moduleRegistry: readonly ModuleManifest[];
  /**
   * Core's routes (method and path), which no module route may take: the HTTP layer's table
   * (src/http/routes/index.ts), handed in so that building the context does not import the HTTP layer.
   */
  coreRoutes: readonly { method: string; path: string }[];
  /** Certificates (PEM) the OpenID provider's outbound fetches trust besides the system's: tests only (a self-signed host). */
  outboundCa?: string;
}

/**
 * Core's builder: opens the stores and builds the parts in order — database and Redis, repositories,
 * the module runtime, the services, then the context that holds them. It wires core's own
 * implementations; what is not core's — the module registry, core's route table — the composition
 * root (entry/, through src/cli/context.ts; a test its own) hands in.
 */
export async function createAppContext(config: Config, opts: CreateAppContextOptions): Promise<AppContext> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const metrics = createMetrics();
  const clock = opts.clock;
  const refusals = createRefusalLog(logger, clock ? { now: () => clock().getTime() } : {});
  const sequelize = await createSequelize(config, logger);
  const closers: Closer[] = [];
  try {
    await sequelize.authenticate();
    closers.push(
      closer('database', async () => {
        // SQLite's close waits for every statement queued behind another process's lock; the file is
        // consistent at every commit, so during an outage the process leaves it to the exit.
        if (!dbHealth.available() && dialectOf(sequelize) === 'sqlite') return;
        await sequelize.close();
      }),
    );
    const dbHealth: DatabaseHealth = new DatabaseHealth({
      probe: databaseProbe(config, (sql) => rawQuery(sql)),
      logger,
      onChange: (up) => metrics.databaseState(up),
    });
    const rawQuery = guardDatabase(sequelize, dbHealth);
    closers.unshift(closer('database health', async () => dbHealth.stop()));

    const { redis, redisHealth, cache, store, bus, limiter, loginBackoff } = await openSharedStores(config, logger, closers);

    const models = defineSystemModels(sequelize);
    const repos = {
      users: createUserRepository(sequelize),
      sessions: createSessionRepository(sequelize),
      authTokens: createAuthTokenRepository(models.AuthToken),
      settings: createSettingsRepository(models.Setting),
      audit: createAuditRepository(sequelize),
    };
    const hooks = createHooks();
    const instanceId = randomUUID();
    const dialect = dialectOf(sequelize);

    const deferred = createDeferredWork(logger);
    // Before the module runtime (the hub records module.* events); the modules' types are asked for at
    // each write, by when the runtime exists.
    const audit = createAuditService({
      repo: repos.audit,
      transaction: (fn) => sequelize.transaction(fn),
      moduleTypes: () => new Map(modules.registry().flatMap((m) => m.auditEvents.map((e) => [e.type, e.description] as const))),
      logger,
      clock: opts.clock,
      later: (what, work) => deferred.later(what, work),
      onWritten: (type) => metrics.auditEvent(type),
    });
    // A module's context needs the services, and the services need the runtime: the runtime asks for
    // a context on a module's first use (the reload below, a request), by when `contextDeps` is set.
    let contextDeps: ModuleContextDeps | null = null;
    const modules = createModuleRuntime(
      {
        config,
        logger,
        db: { sequelize, dialect, models, settings: repos.settings, instanceId },
        bus,
        hooks,
        users: repos.users,
        audit,
        contextFor(manifest) {
          if (!contextDeps) throw new Error(`module ${manifest.id}: context asked for before the services exist`);
          return createModuleContext(contextDeps, manifest);
        },
      },
      { registry: opts.moduleRegistry, coreRoutes: opts.coreRoutes },
    );
    const migrator = createMigrator(sequelize, () => [coreMigrations, ...modules.installedSources()]);

    const sessions = createSessionService({
      sessions: repos.sessions,
      users: repos.users,
      shared: redis ? cache : null,
      bus,
      logger,
      clock: opts.clock,
      onLookup: metrics.cacheLookup,
      ttlSec: config.sessionTtl,
      pendingTtlSec: config.pendingSessionTtl,
      idleTimeoutSec: config.sessionIdleTimeout,
      maxLifetimeSec: config.sessionMaxLifetime,
      outage: { downSince: () => dbHealth.downSince(), refusal: () => dbHealth.refusal() },
      outageGraceSec: config.sessionOutageGrace,
    });
    await sessions.subscribe();
    redisHealth?.on('recovered', () => {
      sessions.resync().catch((err: Error) => logger.warn({ err: err.message }, 'could not resync caches after the Redis outage'));
    });
    const passwords = timedHasher(createPasswordHasher(config.bcryptRounds), metrics);
    watchCounts(metrics, repos, opts.clock);
    const users = createUserService({
      users: repos.users,
      sessions,
      passwords,
      passwordWords: siteWords(config),
      hooks,
      modules,
      transaction: (fn) => sequelize.transaction(fn),
      audit,
      clock: opts.clock,
      logger,
    });
    const signIn = createSignIn({
      sessions,
      hooks,
      logger,
      audit,
      transaction: (fn) => sequelize.transaction(fn),
      onActivated: () => metrics.login('success'),
    });
    // Last uses of sessions still waiting for their write go out before the database closes (at most 2 s: a database down must not hold up the stop).
    closers.unshift(closer('session use', () => within(sessions.flushUses(), 2_000)));
    const flows = createAccountFlows({
      config,
      logger,
      authTokens: repos.authTokens,
      users: repos.users,
      userService: users,
      sessions,
      passwords,
      hooks,
      signIn: signIn.signIn,
      limiter,
      deferred,
      audit,
      transaction: (fn) => sequelize.transaction(fn),
      clock: opts.clock,
    });
    const auth = createAuthService({
      signIn: signIn.signIn,
      users: repos.users,
      userService: users,
      sessions,
      passwords,
      hooks,
      backoff: loginBackoff,
      audit,
      transaction: (fn) => sequelize.transaction(fn),
      config,
      logger,
      addressTaken: (email) => flows.verification.addressTaken(email),
    });
    // Mails the user about security events on their account, after commit and after the answer.
    createSecurityNotices({
      config,
      users: repos.users,
      notify: createAccountNotifier({ mailer: flows.mailer, sms: flows.sms, limiter, config, logger }),
      detector: createNewDeviceDetector({ repo: repos.audit }),
      later: (what, work) => deferred.later(what, work),
      logger,
    }).attach(audit);
    // Mail and tokens scheduled after answers go out before the mailer closes.
    closers.unshift(
      closer('deferred mail', async () => {
        await flows.deferred.idle(5_000);
        await flows.mailer.close();
      }),
    );
    const webhooks = createWebhooks({ config, sequelize, audit, logger, metrics, instanceId, clock: opts.clock, dbHealth });
    // The worker (started by serve) stops before the database closes; its requests in flight are aborted.
    closers.unshift(closer('webhook worker', () => webhooks.stopWorker(2_000)));
    const oidc = createOidc({
      config,
      sequelize,
      cache,
      store,
      audit,
      users: repos.users,
      sessions,
      logger,
      limiter,
      outbox: webhooks,
      clock: opts.clock,
      outboundCa: opts.outboundCa,
    });
    const services: Services = {
      audit,
      webhooks,
      oidc,
      sessions,
      passwords,
      users,
      auth,
      signIn,
      pictures: createPictureService({
        users: repos.users,
        dir: path.join(config.dataDirAbs, 'pictures'),
        publicBaseUrl: config.publicBaseUrl,
        patchUser: (id, values) => users.patch(id, values),
        logger,
      }),
      ...flows,
      social: createSocialService({
        config,
        ...createSocialStores(config, sequelize, repos.authTokens, opts.clock ?? (() => new Date())),
        transaction: (fn) => sequelize.transaction(fn),
        users: repos.users,
        userService: users,
        hooks,
        signIn: signIn.signIn,
        audit,
        logger,
        clock: opts.clock,
      }),
    };
    contextDeps = { config, logger, dialect, sequelize, cache, limiter, loginBackoff, hooks, repos, modules, services };

    const ctx: AppContext = {
      instanceId,
      config,
      logger,
      sequelize,
      dbHealth,
      dialect,
      models,
      redis,
      redisHealth,
      cache,
      store,
      bus,
      limiter,
      loginBackoff,
      repos,
      migrator,
      hooks,
      modules,
      metrics,
      refusals,
      services,
      async close({ withinMs = 15_000 } = {}) {
        const end = Date.now() + withinMs;
        for (const c of closers.splice(0)) {
          const started = Date.now();
          await within(c.run(), Math.max(100, end - Date.now()));
          logger.debug({ step: c.name, ms: Date.now() - started }, 'closed');
        }
      },
    };
    closers.unshift(closer('modules', () => modules.close()));
    // First of all (the server has stopped answering by now): the refusals counted in the last minute.
    closers.unshift(closer('refusal log', async () => refusals.close()));
    // Installed modules' fields, hooks and routes from the start (nothing, before the first migration).
    await modules.reload();
    return ctx;
  } catch (err) {
    for (const c of closers) await within(c.run(), 2_000);
    throw err;
  }
}
