import type { ModuleManifest } from '../define-module.js';
import { compareVersions, type Problem } from '../registry.js';
import { existingTables, hubMigrator, requireManifest, userColumns, type HubDeps } from './hub-deps.js';

export const RUNTIME_SCOPE = 'gatehouse-core';

export interface ModuleComponent {
  component_id: string;
  component_type: 'migration' | 'table' | 'user_fields' | 'routes' | 'hooks' | 'jobs' | 'commands';
  description: string;
  expected_version: string;
  installed_version: string | null;
  installed: boolean;
  status: string;
  items?: string[];
}

export interface ModuleStatus {
  module_id: string;
  module_description: string;
  runtime_scope: typeof RUNTIME_SCOPE;
  module_version: string;
  installed_version: string | null;
  status: 'installed' | 'not_installed' | 'disabled';
  enabled: boolean;
  update_available: boolean;
  installed_at: string | null;
  requires: string[];
  problems: Problem[];
  components: ModuleComponent[];
}

/** A registry entry: what the module is and what installing it brings. */
export function registryEntry(d: HubDeps, id: string) {
  const m = requireManifest(d, id);
  const state = d.runtime.installed().find((s) => s.id === id);
  return {
    module_id: m.id,
    module_version: m.version,
    module_description: m.description,
    runtime_scope: RUNTIME_SCOPE,
    requires: m.requires,
    installed: Boolean(state),
    installed_version: state?.version ?? null,
    migrations: m.migrations.map((x) => x.name),
    tables: m.tables,
    routes: m.routes.map((r) => ({ method: r.method.toUpperCase(), path: r.path })),
    user_fields: m.userFields.map((f) => ({ name: f.name, type: f.type, write_only: Boolean(f.writeOnly), description: f.description ?? null })),
    settings: m.config ? Object.entries(m.config.parse({})).map(([key, value]) => ({ key, default: value })) : [],
    jobs: m.jobs.map((j) => ({ name: j.name, schedule: j.schedule })),
    hooks: m.hooks.map((h) => h.event),
    commands: m.commands.map((c) => ({ name: c.name, description: c.description })),
    emails: m.emails,
    exporters: m.exporters.map((e) => e.name),
    erasers: m.erasers.map((e) => e.name),
    problems: d.runtime.problems(m.id),
  };
}

/** The registry as a list (discover). */
export function listRegistry(d: HubDeps) {
  const states = new Map(d.runtime.installed().map((s) => [s.id, s]));
  return d.runtime.registry().map((m) => {
    const s = states.get(m.id);
    return {
      module_id: m.id,
      module_version: m.version,
      module_description: m.description,
      requires: m.requires,
      installed: Boolean(s),
      installed_version: s?.version ?? null,
      enabled: s?.enabled ?? false,
      update_available: Boolean(s && compareVersions(m.version, s.version) > 0),
    };
  });
}

/** Status of modules (all, or the ones named) as the database shows them, component by component. */
export async function moduleStatuses(d: HubDeps, ids?: string[]): Promise<ModuleStatus[]> {
  const app = d.db;
  const manifests = ids ? ids.map((id) => requireManifest(d, id)) : [...d.runtime.registry()];
  const done = new Set(await hubMigrator(d).executed());
  const tables = await existingTables(app);
  const columns = await userColumns(app);
  const states = new Map(d.runtime.installed().map((s) => [s.id, s]));
  return manifests.map((m) => statusOf(m, states.get(m.id), done, tables, columns, d.runtime.problems(m.id)));
}

function statusOf(
  m: ModuleManifest,
  state: { version: string; enabled: boolean; installedAt: Date } | undefined,
  done: Set<string>,
  tables: Set<string>,
  columns: Set<string>,
  problems: Problem[],
): ModuleStatus {
  const installedVersion = state?.version ?? null;
  const base = { expected_version: m.version, installed_version: installedVersion };
  const live = state ? (state.enabled ? 'active' : 'disabled') : 'not_installed';
  const components: ModuleComponent[] = [];
  for (const x of m.migrations) {
    const applied = done.has(`${m.id}/${x.name}`);
    components.push({
      component_id: `migration:${x.name}`,
      component_type: 'migration',
      description: `migration ${x.name}`,
      ...base,
      installed: applied,
      status: applied ? 'applied' : 'pending',
    });
  }
  for (const t of m.tables) {
    const present = tables.has(t);
    components.push({
      component_id: `table:${t}`,
      component_type: 'table',
      description: `table ${t}`,
      ...base,
      installed: present,
      status: present ? 'present' : 'missing',
    });
  }
  const group = (type: ModuleComponent['component_type'], items: string[], installed: boolean, status: string) => {
    if (items.length)
      components.push({
        component_id: type,
        component_type: type,
        description: `${items.length} ${type.replace('_', ' ')}`,
        ...base,
        installed,
        status,
        items,
      });
  };
  const fieldsPresent = m.userFields.every((f) => columns.has(f.name));
  group(
    'user_fields',
    m.userFields.map((f) => f.name),
    fieldsPresent,
    fieldsPresent ? (state ? 'active' : 'present') : 'missing',
  );
  group(
    'routes',
    m.routes.map((r) => `${r.method.toUpperCase()} ${r.path}`),
    Boolean(state),
    live,
  );
  group(
    'hooks',
    m.hooks.map((h) => h.event),
    Boolean(state),
    live,
  );
  group(
    'jobs',
    m.jobs.map((j) => `${j.name} (${j.schedule})`),
    Boolean(state),
    live,
  );
  group(
    'commands',
    m.commands.map((c) => c.name),
    Boolean(state),
    live,
  );
  return {
    module_id: m.id,
    module_description: m.description,
    runtime_scope: RUNTIME_SCOPE,
    module_version: m.version,
    installed_version: installedVersion,
    status: state ? (state.enabled ? 'installed' : 'disabled') : 'not_installed',
    enabled: Boolean(state?.enabled),
    update_available: Boolean(state && compareVersions(m.version, state.version) > 0),
    installed_at: state ? state.installedAt.toISOString() : null,
    requires: m.requires,
    problems,
    components,
  };
}
