import { Codes } from '../../errors/codes.js';
import type { ModuleManifest } from '../define-module.js';
import { compareVersions, type Problem } from '../registry.js';
import { existingTables, hubMigrator, requireManifest, userColumns, type HubDeps } from './hub-deps.js';

export interface ModulePlan {
  module_id: string;
  action: 'install' | 'update';
  module_version: string;
  installed_version: string | null;
  /** Nothing stands in the way (no conflicts, requirements met, dry-run succeeded when executed). */
  ok: boolean;
  /** Nothing to do (an update when already current). */
  up_to_date: boolean;
  problems: Problem[];
  dependencies: { module_id: string; installed: boolean; included: boolean }[];
  /** Pending migrations with the SQL they ran in the rolled-back dry-run. */
  migrations: { id: string; name: string; sql: string[] }[];
  /** Migrations already recorded as applied (a reinstall after an uninstall that kept the data). */
  reused_migrations: string[];
  routes: { method: string; path: string }[];
  user_fields: { name: string; type: string; write_only: boolean }[];
  tables: string[];
  settings: { key: string; value: unknown }[];
  jobs: { name: string; schedule: string }[];
  hooks: string[];
  commands: string[];
  dry_run: { executed: boolean; rolled_back: boolean; error: string | null };
}

export interface PlanOptions {
  /** Run the pending migrations in a transaction that is rolled back, capturing their SQL. */
  execute: boolean;
  /** Settings to store with the install, per module id. */
  config?: Record<string, Record<string, unknown>>;
}

const CREATE_TABLE_RE = /CREATE TABLE (?:IF NOT EXISTS )?[`"]?([A-Za-z0-9_]+)[`"]?/gi;

/**
 * Plans an install (or update) of modules, in dependency order: what would run, what it adds, what
 * stands in the way. With `execute`, the pending migrations really run inside one transaction that is
 * rolled back, which proves they apply on this database while changing nothing.
 */
export async function planChange(d: HubDeps, action: 'install' | 'update', ids: string[], opts: PlanOptions): Promise<ModulePlan[]> {
  const app = d.db;
  const wanted = new Set(ids.map((id) => requireManifest(d, id).id));
  const manifests = d.runtime.registry().filter((m) => wanted.has(m.id));
  const migrator = hubMigrator(d);
  const done = new Set(await migrator.executed());
  const tables = await existingTables(app);
  const columns = await userColumns(app);
  const installed = new Map(d.runtime.installed().map((s) => [s.id, s]));

  const plans = manifests.map((m) => {
    const state = installed.get(m.id);
    const problems: Problem[] = [...d.runtime.problems(m.id)];
    const applied = m.migrations.filter((x) => done.has(`${m.id}/${x.name}`));
    const pending = m.migrations.filter((x) => !done.has(`${m.id}/${x.name}`));
    if (action === 'install' && state) {
      problems.push({ code: Codes.MODULE_ALREADY_INSTALLED, message: `${m.id} is already installed (version ${state.version}); use update` });
    }
    if (action === 'update' && !state) problems.push({ code: Codes.MODULE_NOT_INSTALLED, message: `${m.id} is not installed` });
    if (action === 'update' && state && compareVersions(m.version, state.version) < 0) {
      problems.push({
        code: Codes.MODULE_CONFLICT,
        message: `the registry has ${m.id} ${m.version}, older than the installed ${state.version}; downgrades are not supported`,
      });
    }
    const dependencies = m.requires.map((r) => ({ module_id: r, installed: installed.has(r), included: wanted.has(r) }));
    for (const dep of dependencies) {
      if (!dep.installed && !dep.included) {
        problems.push({ code: Codes.MODULE_DEPENDENCY_ERROR, message: `${m.id} requires ${dep.module_id}: install it first, or together` });
      }
    }
    // Leftovers of a previous install are reused; anything else of the same name belongs to someone else.
    if (action === 'install' && !applied.length) {
      for (const t of m.tables) if (tables.has(t)) problems.push({ code: Codes.MODULE_CONFLICT, message: `table ${t} already exists` });
      for (const f of m.userFields) if (columns.has(f.name)) problems.push({ code: Codes.MODULE_CONFLICT, message: `users column ${f.name} already exists` });
    }
    const settings = settingsOf(d, m, opts.config?.[m.id], problems);
    const plan: ModulePlan = {
      module_id: m.id,
      action,
      module_version: m.version,
      installed_version: state?.version ?? null,
      ok: false,
      up_to_date: action === 'update' && !!state && state.version === m.version && pending.length === 0,
      problems,
      dependencies,
      migrations: pending.map((x) => ({ id: `${m.id}/${x.name}`, name: x.name, sql: [] })),
      reused_migrations: action === 'install' ? applied.map((x) => x.name) : [],
      routes: m.routes.map((r) => ({ method: r.method.toUpperCase(), path: r.path })),
      user_fields: m.userFields.map((f) => ({ name: f.name, type: f.type, write_only: Boolean(f.writeOnly) })),
      tables: [...m.tables],
      settings,
      jobs: m.jobs.map((j) => ({ name: j.name, schedule: j.schedule })),
      hooks: m.hooks.map((h) => h.event),
      commands: m.commands.map((c) => c.name),
      dry_run: { executed: false, rolled_back: false, error: null },
    };
    return plan;
  });

  const runnable = plans.every((p) => !p.problems.length) && plans.some((p) => p.migrations.length);
  if (opts.execute && runnable) await executeDryRun(d, plans, manifests);
  for (const p of plans) p.ok = !p.problems.length && !p.dry_run.error;
  return plans;
}

async function executeDryRun(d: HubDeps, plans: ModulePlan[], manifests: ModuleManifest[]): Promise<void> {
  const ids = plans.map((p) => p.module_id);
  try {
    const results = await hubMigrator(d).dryRun(ids);
    for (const r of results) {
      const plan = plans.find((p) => p.module_id === r.source);
      const mig = plan?.migrations.find((x) => x.id === r.id);
      if (mig) mig.sql = r.sql;
    }
    for (const p of plans) p.dry_run = { executed: true, rolled_back: true, error: null };
  } catch (err) {
    const error = (err as Error).message;
    for (const p of plans) p.dry_run = { executed: true, rolled_back: true, error };
    return;
  }
  for (const p of plans) {
    const declared = new Set(manifests.find((m) => m.id === p.module_id)?.tables ?? []);
    for (const mig of p.migrations) {
      for (const stmt of mig.sql) {
        for (const match of stmt.matchAll(CREATE_TABLE_RE)) {
          const table = match[1].toLowerCase();
          if (!declared.has(table)) {
            p.problems.push({ code: Codes.MODULE_CONFLICT, message: `migration ${mig.name} creates table ${table}, which the manifest does not declare` });
          }
        }
      }
    }
  }
}

function settingsOf(d: HubDeps, m: ModuleManifest, override: Record<string, unknown> | undefined, problems: Problem[]) {
  if (!m.config) {
    if (override && Object.keys(override).length) problems.push({ code: Codes.VALIDATION_ERROR, message: `${m.id} has no settings` });
    return [];
  }
  const base = d.runtime.isInstalled(m.id) ? d.runtime.config<Record<string, unknown>>(m.id) : m.config.parse({});
  const parsed = m.config.strict().safeParse({ ...base, ...(override ?? {}) });
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      problems.push({ code: Codes.VALIDATION_ERROR, message: `setting ${i.path.join('.') || '(config)'}: ${i.message}` });
    }
    return Object.entries(base).map(([key, value]) => ({ key, value }));
  }
  return Object.entries(parsed.data).map(([key, value]) => ({ key, value }));
}
