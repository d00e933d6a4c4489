import type { SettingsRepository } from '../../data/repositories/settings-repository.js';
import type { Sequelize } from 'sequelize';
import { createMigrator, type Migrator } from '../../data/migrator.js';
import { AppError } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import type { SystemModels } from '../../data/models/system.models.js';
import type { Dialect } from '../../data/sequelize.js';
import type { Logger } from '../../log/logger.js';
import type { ModuleManifest } from '../define-module.js';
import type { ModuleContext } from '../module-context.js';
import type { Problem } from '../registry.js';
import type { InstalledModule, StateStore } from './state-store.js';
import type { AuditService } from '../../audit/audit-service.js';

/** The security-event record, as the hub writes it: `module.*` events in the change's transaction. */
export type HubAudit = Pick<AuditService, 'record'>;

/** The database the hub works on: its schema, the settings row that locks, the module_state table. */
export interface HubDb {
  sequelize: Sequelize;
  dialect: Dialect;
  models: Pick<SystemModels, 'ModuleState'>;
  /** The settings table's one writer (module settings, the revision, the install lock). */
  settings: SettingsRepository;
  /** This process, named in the install lock. */
  instanceId: string;
}

/** What the hub asks of the module runtime (src/modules/runtime.ts implements it). */
export interface HubRuntime {
  registry(): readonly ModuleManifest[];
  manifest(id: string): ModuleManifest | undefined;
  problems(id: string): Problem[];
  installed(): InstalledModule[];
  isInstalled(id: string): boolean;
  config<T = Record<string, unknown>>(id: string): T;
  context(id: string): ModuleContext;
}

/** What the hub operations share. */
export interface HubDeps {
  db: HubDb;
  logger: Logger;
  runtime: HubRuntime;
  store: StateStore;
  audit: HubAudit;
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
  return createMigrator(d.db.sequelize, () => d.runtime.registry().map((m) => ({ id: m.id, migrations: m.migrations })));
}

export function requireManifest(d: HubDeps, id: string): ModuleManifest {
  const m = d.runtime.manifest(id);
  if (!m) throw new AppError(404, Codes.MODULE_NOT_FOUND, `Module ${id} is not in the registry`);
  return m;
}

/** Names of existing tables, lower-cased, whatever shape the dialect answers with. */
export async function existingTables(app: Pick<HubDb, 'sequelize'>): Promise<Set<string>> {
  const raw = (await app.sequelize.getQueryInterface().showAllTables()) as unknown[];
  return new Set(raw.map((t) => String(typeof t === 'string' ? t : ((t as { tableName?: string }).tableName ?? '')).toLowerCase()));
}

/** Columns of a table (raw: Sequelize's SQLite describeTable trips over expression indexes). */
export async function tableColumns(app: Pick<HubDb, 'sequelize' | 'dialect'>, table: string): Promise<Set<string>> {
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

export const userColumns = (app: Pick<HubDb, 'sequelize' | 'dialect'>) => tableColumns(app, 'users');
