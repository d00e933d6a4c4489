import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import type { Config } from './config/schema.js';
import { closer, openSharedStores, within, type Closer, type SharedStores } from './app-stores.js';
import { servicesStage, type Services } from './app-services.js';
import { eventTable, wireEvents, type EventTableRow } from './app-events.js';
import { createSequelize, databaseProbe, dialectOf, type Dialect } from './data/sequelize.js';
import { DatabaseHealth, guardDatabase } from './data/db-health.js';
import { createMigrator, type Migrator } from './data/migrator.js';
import { coreMigrations } from './data/migrations/index.js';
import type { Transaction } from './data/unit-of-work.js';
import { createUserRepository, type UserRepository } from './data/repositories/user-repository.js';
import { createSessionRepository, type SessionRepository } from './data/repositories/session-repository.js';
import { createAuthTokenRepository, type AuthTokenRepository } from './data/repositories/auth-token-repository.js';
import { createSettingsRepository, type SettingsRepository } from './data/repositories/settings-repository.js';
import { createAuditRepository, type AuditRepository } from './data/repositories/audit-repository.js';
import { createAuditService, type AuditService } from './audit/audit-service.js';
import { createDeferredWork, type DeferredWork } from './services/deferred-work.js';
import { defineSystemModels, type SystemModels } from './data/models/system.models.js';
import { createLogger, type Logger } from './log/logger.js';
import { createRefusalLog, type RefusalLog } from './log/refusal-log.js';
import { createHooks, type Hooks } from './modules/hooks.js';
import type { ModuleRuntime } from './modules/runtime.js';
import { createModuleRuntime } from './modules/hub/module-runtime.js';
import { createModuleContext } from './modules/module-context.js';
import type { ModuleContextDeps } from './modules/module-context-deps.js';
import type { ModuleManifest } from './modules/define-module.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';

export type { Services } from './app-services.js';

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
  /** The event table (src/app-events.ts): which event, which reaction, in which transaction or after commit; as wired. */
  events: readonly EventTableRow[];
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

/** Stage 1, config: what every later stage logs, measures and tells time with. */
export interface AppBasics {
  logger: Logger;
  metrics: Metrics;
  refusals: RefusalLog;
  clock: (() => Date) | undefined;
  /** Unique per process: tells instances apart in locks and logs. */
  instanceId: string;
}

/** Stage 2, stores: the database (guarded by its health), Redis or its in-process stand-ins, the repositories, the hook registry. */
export interface AppStores extends SharedStores {
  sequelize: Sequelize;
  dialect: Dialect;
  dbHealth: DatabaseHealth;
  models: SystemModels;
  repos: AppContext['repos'];
  hooks: Hooks;
  /** Opens a unit of work (a database transaction). */
  transaction: <T>(fn: (tx: Transaction) => Promise<T>) => Promise<T>;
}

/** Stage 3, events: the security-event record, which is also the event bus, and the work done after an answer. */
export interface AppEvents {
  audit: AuditService;
  deferred: DeferredWork;
}

/** Stage 4, modules: the runtime over the registry the composition root handed in; module contexts are bound once the services exist. */
export interface AppModules {
  runtime: ModuleRuntime;
  migrator: Migrator;
  /** Hands the runtime what module contexts are built from (stage 6). */
  bindContexts(deps: ModuleContextDeps): void;
}

/**
 * Core's builder, in named stages, each a function with a typed result, handed only what it uses:
 *
 * 1. `configStage`: logger, metrics, the refusal log, the clock, this instance's id
 * 2. `storesStage`: database, Redis (cache, store, bus, limiter, login backoff), repositories, hooks
 * 3. `eventsStage`: the audit record (the event bus) and the after-answer work
 * 4. `modulesStage`: the module runtime over `opts.moduleRegistry`
 * 5. `servicesStage` (app-services.ts): sessions, users, sign-in, account flows, social, webhooks, OpenID;
 *    then the event table (app-events.ts) is wired: the only subscriptions to the audit record and to
 *    session revocations
 * 6. `contextStage`: module contexts bound, the AppContext the HTTP layer, the jobs and the CLI take,
 *    installed modules loaded
 *
 * It wires core's own implementations; what is not core's — the module registry, core's route table —
 * the composition root (entry/, through src/cli/context.ts; a test its own) hands in.
 */
export async function createAppContext(config: Config, opts: CreateAppContextOptions): Promise<AppContext> {
  const basics = configStage(config, opts);
  const closers: Closer[] = [];
  try {
    const stores = await storesStage(config, basics, closers);
    const events = eventsStage(basics, stores, () => modules.runtime);
    const modules = modulesStage(config, basics, stores, events, opts);
    const { services, notices } = await servicesStage(config, basics, stores, events, modules.runtime, closers, opts);
    const table = eventTable({ config, notices, webhooks: services.webhooks, oidc: services.oidc, modules: modules.runtime, logger: basics.logger });
    wireEvents(table, { audit: events.audit, sessions: services.sessions, logger: basics.logger });
    return await contextStage(config, basics, stores, modules, services, table, closers);
  } catch (err) {
    for (const c of closers) await within(c.run(), 2_000);
    throw err;
  }
}

/** Stage 1: nothing opened yet. */
export function configStage(config: Config, opts: Pick<CreateAppContextOptions, 'logger' | 'clock'>): AppBasics {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const clock = opts.clock;
  return {
    logger,
    metrics: createMetrics(),
    refusals: createRefusalLog(logger, clock ? { now: () => clock().getTime() } : {}),
    clock,
    instanceId: randomUUID(),
  };
}

/** Stage 2: opens the database and the shared stores; their closing steps go into `closers`. */
export async function storesStage(config: Config, basics: AppBasics, closers: Closer[]): Promise<AppStores> {
  const { logger, metrics } = basics;
  const sequelize = await createSequelize(config, logger);
  let dbHealth: DatabaseHealth | null = null;
  closers.push(
    closer('database', async () => {
      // SQLite's close waits for every statement queued behind another process's lock; the file is
      // consistent at every commit, so during an outage the process leaves it to the exit.
      if (dbHealth && !dbHealth.available() && dialectOf(sequelize) === 'sqlite') return;
      await sequelize.close();
    }),
  );
  await sequelize.authenticate();
  const health = new DatabaseHealth({
    probe: databaseProbe(config, (sql) => rawQuery(sql)),
    logger,
    onChange: (up) => metrics.databaseState(up),
  });
  dbHealth = health;
  const rawQuery = guardDatabase(sequelize, health);
  closers.unshift(closer('database health', async () => health.stop()));

  const shared = await openSharedStores(config, logger, closers);
  const models = defineSystemModels(sequelize);
  const repos = {
    users: createUserRepository(sequelize),
    sessions: createSessionRepository(sequelize),
    authTokens: createAuthTokenRepository(models.AuthToken),
    settings: createSettingsRepository(models.Setting),
    audit: createAuditRepository(sequelize),
  };
  return {
    ...shared,
    sequelize,
    dialect: dialectOf(sequelize),
    dbHealth: health,
    models,
    repos,
    hooks: createHooks(),
    transaction: (fn) => sequelize.transaction(fn),
  };
}

/**
 * Stage 3: before the module runtime (the hub records module.* events); the modules' event types are
 * asked for at each write, by when the runtime exists.
 */
export function eventsStage(basics: AppBasics, stores: AppStores, runtime: () => ModuleRuntime): AppEvents {
  const { logger, metrics, clock } = basics;
  const deferred = createDeferredWork(logger);
  const audit = createAuditService({
    repo: stores.repos.audit,
    transaction: stores.transaction,
    moduleTypes: () =>
      new Map(
        runtime()
          .registry()
          .flatMap((m) => m.auditEvents.map((e) => [e.type, e.description] as const)),
      ),
    logger,
    clock,
    later: (what, work) => deferred.later(what, work),
    onWritten: (type) => metrics.auditEvent(type),
  });
  return { audit, deferred };
}

/**
 * Stage 4: the module runtime over the registry handed in (never a module-level variable). A module's
 * context needs the services, and the services need the runtime: the runtime asks for a context on a
 * module's first use (the reload in stage 6, a request), by when `bindContexts` has been called.
 */
export function modulesStage(
  config: Config,
  basics: AppBasics,
  stores: AppStores,
  events: AppEvents,
  opts: Pick<CreateAppContextOptions, 'moduleRegistry' | 'coreRoutes'>,
): AppModules {
  const { sequelize, dialect, models, repos, bus, hooks } = stores;
  let contextDeps: ModuleContextDeps | null = null;
  const runtime = createModuleRuntime(
    {
      config,
      logger: basics.logger,
      db: { sequelize, dialect, models, settings: repos.settings, instanceId: basics.instanceId },
      bus,
      hooks,
      users: repos.users,
      audit: events.audit,
      contextFor(manifest) {
        if (!contextDeps) throw new Error(`module ${manifest.id}: context asked for before the services exist`);
        return createModuleContext(contextDeps, manifest);
      },
    },
    { registry: opts.moduleRegistry, coreRoutes: opts.coreRoutes },
  );
  return {
    runtime,
    migrator: createMigrator(sequelize, () => [coreMigrations, ...runtime.installedSources()]),
    bindContexts(deps) {
      contextDeps = deps;
    },
  };
}

/**
 * Stage 6: binds module contexts to the services, assembles the AppContext (what the HTTP layer,
 * src/http/create-app.ts, the jobs and the CLI take) and loads the installed modules' fields, hooks
 * and routes (nothing, before the first migration).
 */
export async function contextStage(
  config: Config,
  basics: AppBasics,
  stores: AppStores,
  modules: AppModules,
  services: Services,
  events: readonly EventTableRow[],
  closers: Closer[],
): Promise<AppContext> {
  const { logger, metrics, refusals, instanceId } = basics;
  const { sequelize, dialect, cache, limiter, loginBackoff, hooks, repos } = stores;
  const runtime = modules.runtime;
  modules.bindContexts({ config, logger, dialect, sequelize, cache, limiter, loginBackoff, hooks, repos, modules: runtime, services });
  closers.unshift(closer('modules', () => runtime.close()));
  // First of all (the server has stopped answering by now): the refusals counted in the last minute.
  closers.unshift(closer('refusal log', async () => refusals.close()));
  const ctx: AppContext = {
    instanceId,
    config,
    logger,
    sequelize,
    dbHealth: stores.dbHealth,
    dialect,
    models: stores.models,
    redis: stores.redis,
    redisHealth: stores.redisHealth,
    cache,
    store: stores.store,
    bus: stores.bus,
    limiter,
    loginBackoff,
    repos,
    migrator: modules.migrator,
    hooks,
    modules: runtime,
    metrics,
    refusals,
    services,
    events,
    async close({ withinMs = 15_000 } = {}) {
      const end = Date.now() + withinMs;
      for (const c of closers.splice(0)) {
        const started = Date.now();
        await within(c.run(), Math.max(100, end - Date.now()));
        logger.debug({ step: c.name, ms: Date.now() - started }, 'closed');
      }
    },
  };
  await runtime.reload();
  return ctx;
}
