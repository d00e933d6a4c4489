import { Codes } from '../errors/codes.js';
import type { ModuleManifest } from './define-module.js';

/** Why a module cannot be installed; `code` is the wire code an install attempt answers with. */
export interface Problem {
  code: string;
  message: string;
}

/** What core already owns, so modules can be checked against it. */
export interface CoreSurface {
  routes: { method: string; path: string }[];
  userColumns: string[];
  jobs: string[];
  /** Top-level CLI command names (when known: the CLI checks module commands when it registers them). */
  commands?: string[];
}

export interface CheckedRegistry {
  /** Manifests in dependency order (a module after everything it requires). */
  ordered: ModuleManifest[];
  /** Problems per module id: such a module cannot be installed. */
  problems: Map<string, Problem[]>;
}

/** Express matches paths case-insensitively and ignores a trailing slash; parameters match anything. */
export const routeKey = (method: string, path: string) =>
  `${method.toUpperCase()} ${path
    .toLowerCase()
    .replace(/\/+$/, '')
    .replace(/:[^/]+/g, ':')}`;

/**
 * Orders the registry by dependencies and finds what cannot coexist: routes (same method and path as
 * core or another module), user columns, tables, jobs and commands claimed twice, unknown or cyclic
 * requirements. Conflicts are reported against both modules involved.
 */
export function checkRegistry(manifests: readonly ModuleManifest[], core: CoreSurface): CheckedRegistry {
  const problems = new Map<string, Problem[]>();
  const add = (id: string, message: string, code: string = Codes.MODULE_CONFLICT) => problems.set(id, [...(problems.get(id) ?? []), { code, message }]);
  const dep = Codes.MODULE_DEPENDENCY_ERROR;
  const byId = new Map<string, ModuleManifest>();
  for (const m of manifests) {
    if (byId.has(m.id)) add(m.id, `module id ${m.id} appears twice in the registry`);
    else byId.set(m.id, m);
  }

  claim(manifests, add, 'route', (m) => m.routes.map((r) => routeKey(r.method, r.path)), new Set(core.routes.map((r) => routeKey(r.method, r.path))));
  claim(manifests, add, 'user field', (m) => m.userFields.map((f) => f.name), new Set(core.userColumns));
  claim(manifests, add, 'table', (m) => m.tables, new Set());
  claim(manifests, add, 'job', (m) => m.jobs.map((j) => j.name), new Set(core.jobs));
  claim(manifests, add, 'command', (m) => m.commands.map((c) => c.name), new Set(core.commands ?? []));

  for (const m of byId.values()) {
    for (const r of m.requires) if (!byId.has(r)) add(m.id, `requires ${r}, which is not in the registry`, dep);
  }

  // Kahn's algorithm, keeping registry order among independent modules.
  const ordered: ModuleManifest[] = [];
  const placed = new Set<string>();
  let progress = true;
  while (progress) {
    progress = false;
    for (const m of byId.values()) {
      if (placed.has(m.id)) continue;
      if (m.requires.every((r) => placed.has(r) || !byId.has(r))) {
        ordered.push(m);
        placed.add(m.id);
        progress = true;
      }
    }
  }
  const onCycle = (start: string): boolean => {
    const seen = new Set<string>();
    const stack = [...(byId.get(start)?.requires ?? [])];
    for (let id = stack.pop(); id !== undefined; id = stack.pop()) {
      if (id === start) return true;
      if (seen.has(id) || placed.has(id)) continue;
      seen.add(id);
      stack.push(...(byId.get(id)?.requires ?? []));
    }
    return false;
  };
  const unplaced = [...byId.values()].filter((m) => !placed.has(m.id));
  for (const m of unplaced) {
    if (onCycle(m.id)) add(m.id, `dependency cycle: ${m.id} requires ${m.requires.filter((r) => !placed.has(r)).join(', ')}`, dep);
    ordered.push(m);
  }
  // A module whose requirement cannot be installed cannot be installed either.
  for (const m of ordered) {
    const blocked = m.requires.filter((r) => problems.has(r));
    if (blocked.length && !problems.has(m.id)) add(m.id, `requires ${blocked.join(', ')}, which cannot be installed`, dep);
  }
  return { ordered, problems };
}

function claim(
  manifests: readonly ModuleManifest[],
  add: (id: string, p: string) => void,
  kind: string,
  names: (m: ModuleManifest) => string[],
  coreOwned: Set<string>,
): void {
  const owner = new Map<string, string>();
  for (const m of manifests) {
    for (const n of new Set(names(m))) {
      if (coreOwned.has(n)) add(m.id, `${kind} ${n} conflicts with core`);
      const other = owner.get(n);
      if (other && other !== m.id) {
        add(m.id, `${kind} ${n} conflicts with module ${other}`);
        add(other, `${kind} ${n} conflicts with module ${m.id}`);
      } else owner.set(n, m.id);
    }
  }
}

/** Compares x.y.z versions: negative when a < b. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d) return d;
  }
  return 0;
}
