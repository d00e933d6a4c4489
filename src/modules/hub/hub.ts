import type { HubDeps } from './hub-deps.js';
import { withInstallLock } from './install-lock.js';
import { install, setEnabled, uninstall, update, type ChangeOptions, type ChangeResult } from './operations.js';
import { planChange, type ModulePlan } from './planner.js';
import { listRegistry, moduleStatuses, registryEntry, type ModuleStatus } from './status.js';

export type { ChangeOptions, ChangeResult, ModulePlan, ModuleStatus };
export type { ProgressEvent } from './operations.js';

/** The hub: the same operations behind `gatehouse module …` and /api/v1/modules/install. */
export interface ModuleHub {
  list(): ReturnType<typeof listRegistry>;
  registryEntry(id: string): ReturnType<typeof registryEntry>;
  status(ids?: string[]): Promise<ModuleStatus[]>;
  /** Dry-run of an install: plans and runs the migrations in a transaction that is rolled back. */
  planInstall(ids: string[], opts?: { config?: Record<string, Record<string, unknown>> }): Promise<ModulePlan[]>;
  install(ids: string[], opts?: ChangeOptions & { config?: Record<string, Record<string, unknown>> }): Promise<ChangeResult>;
  planUpdate(id: string): Promise<ModulePlan>;
  update(id: string, opts?: ChangeOptions): Promise<ChangeResult>;
  enable(id: string, opts?: ChangeOptions): Promise<ChangeResult>;
  disable(id: string, opts?: ChangeOptions): Promise<ChangeResult>;
  /** `force` lets a module's uninstall guard clear what would refuse it (see ModuleUninstallGuard). */
  uninstall(id: string, opts?: ChangeOptions & { dropData?: boolean; force?: boolean }): Promise<ChangeResult>;
}

export function createModuleHub(d: HubDeps): ModuleHub {
  // A dry-run executes migrations too (rolled back): it takes the lock so it never races a real install.
  const locked = <T>(what: string, fn: () => Promise<T>) => withInstallLock(d.db, what, fn);
  return {
    list: () => listRegistry(d),
    registryEntry: (id) => registryEntry(d, id),
    status: (ids) => moduleStatuses(d, ids),
    planInstall: (ids, opts) => locked(`dry-run ${ids.join(', ')}`, () => planChange(d, 'install', ids, { execute: true, config: opts?.config })),
    install: (ids, opts) => install(d, ids, opts),
    planUpdate: (id) => locked(`dry-run update ${id}`, async () => (await planChange(d, 'update', [id], { execute: true }))[0]),
    update: (id, opts) => update(d, id, opts),
    enable: (id, opts) => setEnabled(d, id, true, opts),
    disable: (id, opts) => setEnabled(d, id, false, opts),
    uninstall: (id, opts) => uninstall(d, id, opts),
  };
}
