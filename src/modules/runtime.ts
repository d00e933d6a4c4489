import type { RequestHandler } from 'express';
import type { UserFieldDef } from '../data/models/user.model.js';
import type { MigrationSource } from '../data/migration-types.js';

/**
 * What the rest of Gatehouse asks of the module system. The hub (src/modules/hub) implements it
 * over the registry in modules/ and the module_state table.
 */
export interface ModuleRuntime {
  /** Migration sources of installed modules, in dependency order (core excluded). */
  installedSources(): MigrationSource[];
  isInstalled(id: string): boolean;
  isEnabled(id: string): boolean;
  /** User columns of installed modules. */
  userFields(): UserFieldDef[];
  /** Dispatches to installed modules' routes (answering 503 MODULE_DISABLED when switched off). */
  router: RequestHandler;
  /** Re-reads module state (after an install on this or another instance). */
  reload(): Promise<void>;
  close(): Promise<void>;
}
