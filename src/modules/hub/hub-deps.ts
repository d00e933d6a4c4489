import type { AppContext } from '../../app-context.js';
import { createMigrator, type Migrator } from '../../data/migrator.js';
import { AppError } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import type { ModuleManifest } from '../define-module.js';
import type { ModuleRuntime } from '../runtime.js';
import type { StateStore } from './state-store.js';

/** What the hub operations share. */
export interface HubDeps {
  app(): AppContext;
  runtime: ModuleRuntime;
  store: StateStore;
  /** After a change is committed: reload here, tell the other instances. */
  changed(): Promise<void>;
  /** How long other instances may take to notice a change (before dropping columns they may read). */
  settleMs: number;
}

/**
 * A migrator over every registry module (installed or not), in dependency order. The app's own
 * migrator sees installed modules only; both keep their bookkeeping in the same table.
 */
export function hubMigrator(d: HubDeps): Migrator {
  return createMigrator(d.app().sequelize, () => d.runtime.registry().map((m) => ({ id: m.id, migrations: m.migrations })));
}

export function requireManifest(d: HubDeps, id: string): ModuleManifest {
  const m = d.runtime.manifest(id);
  if (!m) throw new AppError(404, Codes.MODULE_NOT_FOUND, `Module ${id} is not in the registry`);
  return m;
}

/** Names of existing tables, lower-cased, whatever shape the dialect answers with. */
export async function existingTables(app: AppContext): Promise<Set<string>> {
  const raw = (await app.sequelize.getQueryInterface().showAllTables()) as unknown[];
  return new Set(raw.map((t) => String(typeof t === 'string' ? t : ((t as { tableName?: string }).tableName ?? '')).toLowerCase()));
}

/** Columns of a table (raw: Sequelize's SQLite describeTable trips over expression indexes). */
export async function tableColumns(app: AppContext, table: string): Promise<Set<string>> {
  try {
    if (app.dialect === 'sqlite') {
      const [rows] = await app.sequelize.query(`PRAGMA table_info(${JSON.stringify(table)})`);
      return new Set((rows as { name: string }[]).map((r) => r.name));
    }
    const [rows] = await app.sequelize.query('SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?', {
      replacements: [table],
    });
    return new Set((rows as { column_name: string }[]).map((r) => r.column_name));
  } catch {
    return new Set();
  }
}

export const userColumns = (app: AppContext) => tableColumns(app, 'users');
