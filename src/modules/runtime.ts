import type { UserFieldDef } from '../data/models/user.model.js';
import type { MigrationSource } from '../data/migration-types.js';
import type { JobDef } from '../jobs/core-jobs.js';
import type { Transaction } from '../data/unit-of-work.js';
import type { ModuleManifest } from './define-module.js';
import type { ModuleContext } from './module-context.js';
import type { InstalledModule } from './hub/state-store.js';
import type { Problem } from './registry.js';
import type { ModuleHub } from './hub/hub.js';
import type { HubRuntime } from './hub/hub-deps.js';

/** Where module jobs go: the scheduler replaces a group's tasks on every sync. */
export interface JobSink {
  sync(group: string, jobs: JobDef[]): void;
}

/** The module routes as the last reload left them (a new object after each reload); served by http/module-router.ts. */
export interface ModuleRoutes {
  /** Installed modules, in dependency order, each with its context; a switched-off one answers 503. */
  installed: { manifest: ModuleManifest; enabled: boolean; context: ModuleContext }[];
  /** Registry modules that are not installed: their paths answer 503 naming the install command. */
  notInstalled: readonly ModuleManifest[];
}

/**
 * What the rest of Gatehouse asks of the module system. The hub (src/modules/hub) implements it
 * over the registry it is given at the composition root and the module_state table.
 */
export interface ModuleRuntime extends HubRuntime {
  /** Migration sources of installed modules, in dependency order (core excluded). */
  installedSources(): MigrationSource[];
  /** Installed (enabled or switched off). */
  isInstalled(id: string): boolean;
  /** Installed and switched on. */
  isEnabled(id: string): boolean;
  /** User columns of installed modules. */
  userFields(): UserFieldDef[];
  /** The module routes now; null before the first load. */
  routes(): ModuleRoutes | null;
  /** Re-reads module state (after an install on this or another instance). */
  reload(): Promise<void>;
  close(): Promise<void>;

  /** Every module that can be installed, in dependency order. */
  registry(): readonly ModuleManifest[];
  manifest(id: string): ModuleManifest | undefined;
  /** Problems that keep a registry module from being installed (conflicts, missing requirements). */
  problems(id: string): Problem[];
  installed(): InstalledModule[];
  /** The module's settings: its config defaults with the stored overrides applied. */
  config<T = Record<string, unknown>>(id: string): T;
  /**
   * Personal-data exporters and erasers of modules whose data exists: installed (switched off or not),
   * or uninstalled with their data kept.
   */
  exporters(): { module: string; name: string; run(userId: string): Promise<unknown> }[];
  erasers(): { module: string; name: string; erase(userId: string, tx: Transaction): Promise<void> }[];
  /** The context a module's routes, hooks, jobs and commands run with. */
  context(id: string): ModuleContext;
  /** Jobs of installed, switched-on modules. */
  jobs(): JobDef[];
  /** The scheduler registers itself; module jobs follow installs from then on. */
  attachScheduler(sink: JobSink): void;
  /** Install, update, switch and uninstall: the same operations the CLI and the HTTP hub offer. */
  hub: ModuleHub;
  /** Replaces the registry (tests inject test-only modules) and reloads. */
  setRegistry(manifests: readonly ModuleManifest[]): Promise<void>;
}
