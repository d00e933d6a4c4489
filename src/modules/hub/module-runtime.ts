import type { Bus } from '../../cache/cache.js';
import type { Config } from '../../config/schema.js';
import type { UserRepository } from '../../data/repositories/user-repository.js';
import type { Logger } from '../../log/logger.js';
import { CORE_USER_ATTRIBUTES, type UserFieldDef } from '../../data/models/user.model.js';
import { coreJobs, type JobDef } from '../../jobs/core-jobs.js';
import type { ModuleManifest } from '../define-module.js';
import type { ModuleContext } from '../module-context.js';
import type { Hooks } from '../hooks.js';
import { checkRegistry, type CheckedRegistry } from '../registry.js';
import type { JobSink, ModuleRoutes, ModuleRuntime } from '../runtime.js';
import { createModuleHub } from './hub.js';
import type { Transaction } from '../../data/unit-of-work.js';
import { createStateStore, type InstalledModule } from './state-store.js';
import type { HubAudit, HubDb } from './hub-deps.js';
import { envProblems, envSettings } from '../module-env.js';

/** What the runtime works with: built before it, nothing of the services (module contexts come through `contextFor`). */
export interface ModuleRuntimeDeps {
  config: Pick<Config, 'moduleEnv'>;
  logger: Logger;
  /** The database: module_state, the settings rows, the schema (the hub's migrations). */
  db: HubDb;
  bus: Bus;
  hooks: Pick<Hooks, 'on' | 'removeOwner'>;
  /** Learns the installed modules' user columns on every reload. */
  users: Pick<UserRepository, 'setExtraFields'>;
  /** Where the hub records installs, uninstalls and switches (module.* events). */
  audit: HubAudit;
  /**
   * Builds a module's context. The contexts need the services, which need this runtime: the runtime
   * calls it on a module's first use (a reload, a request), once the services exist.
   */
  contextFor(manifest: ModuleManifest): ModuleContext;
}

export interface ModuleRuntimeOptions {
  /** The modules that can be installed: passed in at the composition root (core imports no module). */
  registry: readonly ModuleManifest[];
  /** Core's routes (method and path), which no module route may take: the HTTP layer's table, handed in. */
  coreRoutes: readonly { method: string; path: string }[];
  /** How often module state is re-read from the database (installs by another process). */
  pollMs?: number;
}

export const MODULES_CHANGED = 'modules:changed';

/**
 * Module runtime over the registry and the module_state table. Every instance keeps an in-memory
 * view (installed modules, their user fields, hooks, routes, jobs) and rebuilds it when the state
 * changes: at once on `modules:changed` (bus), and at the latest after `pollMs` by comparing the
 * revision row (a CLI install against an embedded server without Redis).
 */
export function createModuleRuntime(deps: ModuleRuntimeDeps, opts: ModuleRuntimeOptions): ModuleRuntime {
  const { logger, bus, hooks } = deps;
  const instanceId = deps.db.instanceId;
  const pollMs = opts.pollMs ?? 2000;
  let manifests: readonly ModuleManifest[] = opts.registry;
  const contexts = new Map<string, ModuleContext>();
  /** One context per module, built on first use (the services exist by then). */
  const contextOf = (m: ModuleManifest): ModuleContext => {
    let c = contexts.get(m.id);
    if (!c) contexts.set(m.id, (c = deps.contextFor(m)));
    return c;
  };
  let checked: CheckedRegistry | null = null;
  let installed = new Map<string, InstalledModule>();
  let configs = new Map<string, Record<string, unknown>>();
  let withData = new Set<string>();
  let revision: string | null = null;
  let routes: ModuleRoutes | null = null;
  let sink: JobSink | null = null;
  let timer: NodeJS.Timeout | null = null;
  let subscribed = false;
  let closed = false;
  let chain: Promise<void> = Promise.resolve();
  const store = createStateStore(deps.db);

  function check(): CheckedRegistry {
    return checkRegistry(manifests, {
      routes: opts.coreRoutes.map((r) => ({ method: r.method, path: r.path })),
      userColumns: Object.keys(CORE_USER_ATTRIBUTES),
      jobs: coreJobs.map((j) => j.name),
    });
  }

  const ordered = () => checked?.ordered ?? [...manifests];
  const installedManifests = () => ordered().filter((m) => installed.has(m.id));
  const enabledManifests = () => installedManifests().filter((m) => installed.get(m.id)?.enabled === true);
  // Personal data outlives an uninstall that keeps it: export and erasure still cover such modules.
  const dataManifests = () => ordered().filter((m) => installed.has(m.id) || withData.has(m.id));

  async function load(): Promise<void> {
    checked ??= check();
    const rev = await store.readRevision();
    const rows = await store.readStates();
    const known = new Set(manifests.map((m) => m.id));
    for (const r of rows) {
      if (!known.has(r.id)) logger.warn({ module: r.id }, 'installed module is not in the registry; ignored');
    }
    const nextInstalled = new Map(rows.filter((r) => known.has(r.id)).map((r) => [r.id, r]));
    const nextConfigs = await store.readConfigs([...nextInstalled.keys()]);
    const nextWithData = await store.readSourcesWithData();
    // Everything below runs without a pause: a request never sees a module installed whose user
    // fields the repository does not write yet (or the other way round).
    installed = nextInstalled;
    configs = nextConfigs;
    withData = nextWithData;
    revision = rev;

    deps.users.setExtraFields(runtime.userFields());
    reportEnvProblems();
    for (const m of manifests) hooks.removeOwner(m.id);
    for (const m of enabledManifests()) {
      const mc = contextOf(m);
      for (const h of m.hooks) hooks.on(h.event, (payload) => h.handler(payload, mc), m.id, h.when);
    }
    routes = {
      installed: installedManifests().map((m) => ({ manifest: m, enabled: installed.get(m.id)?.enabled === true, context: contextOf(m) })),
      notInstalled: ordered().filter((m) => !installed.has(m.id)),
    };
    sink?.sync('modules', runtime.jobs());
  }

  /** Module settings given in the environment, by manifest (the environment does not change while the process runs). */
  const envValues = new WeakMap<ModuleManifest, Record<string, unknown>>();
  /** Module settings in the environment that fit no reading are logged once (they are ignored). */
  const reported = new Set<string>();
  function reportEnvProblems(): void {
    for (const p of envProblems(manifests, deps.config.moduleEnv ?? {})) {
      if (reported.has(p)) continue;
      reported.add(p);
      logger.warn({ problem: p }, 'module setting in the environment ignored');
    }
  }

  /** Reloads run one at a time; a reload asked for during one runs after it. */
  function reload(): Promise<void> {
    const next = chain.then(load);
    chain = next.catch(() => undefined);
    return next.then(startWatching);
  }

  async function startWatching(): Promise<void> {
    if (closed) return;
    if (!subscribed) {
      subscribed = true;
      await bus.subscribe(MODULES_CHANGED, (msg) => {
        if ((msg as { from?: string } | null)?.from === instanceId) return;
        reload().catch((err) => logger.warn({ err: (err as Error).message }, 'module reload failed'));
      });
    }
    if (!timer && pollMs > 0) {
      let busy = false;
      timer = setInterval(() => {
        if (busy || closed) return;
        busy = true;
        store
          .readRevision()
          .then((rev) => (rev !== revision ? reload() : undefined))
          .catch((err) => logger.debug({ err: (err as Error).message }, 'module revision check failed'))
          .finally(() => (busy = false));
      }, pollMs);
      timer.unref();
    }
  }

  const runtime: ModuleRuntime = {
    installedSources: () => installedManifests().map((m) => ({ id: m.id, migrations: m.migrations })),
    isInstalled: (id) => installed.has(id),
    isEnabled: (id) => installed.get(id)?.enabled === true,
    userFields: (): UserFieldDef[] => installedManifests().flatMap((m) => m.userFields),
    routes: () => routes,
    reload,
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      timer = null;
      await chain;
    },
    registry: () => ordered(),
    manifest: (id) => manifests.find((m) => m.id === id),
    problems: (id) => checked?.problems.get(id) ?? [],
    installed: () => [...installed.values()],
    config<T>(id: string): T {
      const m = manifests.find((x) => x.id === id);
      if (!m?.config) return {} as T;
      // The environment (POST_TYPES_ENABLED=false) wins over the stored settings; it is read once per manifest.
      let fromEnv = envValues.get(m);
      if (!fromEnv) envValues.set(m, (fromEnv = envSettings(m, deps.config.moduleEnv ?? {}).values));
      const parsed = m.config.safeParse({ ...(configs.get(id) ?? {}), ...fromEnv });
      if (parsed.success) return parsed.data as T;
      // A stored value that no longer fits the schema falls back to the defaults rather than failing requests.
      const envOnly = m.config.safeParse(fromEnv);
      return (envOnly.success ? envOnly.data : m.config.parse({})) as T;
    },
    exporters: () =>
      dataManifests().flatMap((m) => m.exporters.map((e) => ({ module: m.id, name: e.name, run: (userId: string) => e.run({ ctx: contextOf(m), userId }) }))),
    erasers: () =>
      dataManifests().flatMap((m) =>
        m.erasers.map((e) => ({ module: m.id, name: e.name, erase: (userId: string, tx: Transaction) => e.run({ ctx: contextOf(m), userId, tx }) })),
      ),
    context(id) {
      const m = manifests.find((x) => x.id === id);
      if (!m) throw new Error(`no module ${id} in the registry`);
      return contextOf(m);
    },
    jobs: (): JobDef[] => enabledManifests().flatMap((m) => m.jobs.map((j) => ({ name: j.name, schedule: j.schedule, run: () => j.run(contextOf(m)) }))),
    attachScheduler(s) {
      sink = s;
      s.sync('modules', runtime.jobs());
    },
    // The hub works on this runtime: made just below, once the runtime exists.
    get hub() {
      return hub;
    },
    async setRegistry(next) {
      manifests = [...next];
      contexts.clear();
      checked = null;
      await reload();
    },
  };
  const hub = createModuleHub({
    db: deps.db,
    logger,
    runtime,
    store,
    audit: deps.audit,
    async changed() {
      await reload();
      await bus.publish(MODULES_CHANGED, { from: instanceId, revision });
    },
    settleMs: Math.max(pollMs, 0) + 500,
  });
  return runtime;
}
