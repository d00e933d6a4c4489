import cron from 'node-cron';
import type { Transaction } from 'sequelize';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import type { MigrationDef } from '../data/migration-types.js';
import type { UserFieldDef } from '../data/models/user.model.js';
import type { RouteDef } from '../http/define-route.js';
import type { JobDef } from '../jobs/core-jobs.js';

/** A users column a module contributes; `module` is filled in from the manifest. */
export type ModuleUserField = Omit<UserFieldDef, 'module'>;

export interface ModuleHook {
  /** A core event name such as `auth.registered`, `auth.login`, `user.updated`. */
  event: string;
  handler(payload: Record<string, unknown>, app: AppContext): Promise<void> | void;
}

export interface ModuleCommandContext {
  app: AppContext;
  args: string[];
  options: Record<string, unknown>;
  /** Human output (suppressed with --json). */
  print(line: string): void;
}

/** A CLI command a module adds: `gatehouse <name> [arguments]`, available while it is installed. */
export interface ModuleCommand {
  /** Namespaced with the module id: `privacy:export`. */
  name: string;
  description: string;
  /** commander argument spec, e.g. `<email>`. */
  arguments?: string;
  options?: { flags: string; description: string }[];
  /** The value returned is printed with --json. */
  run(ctx: ModuleCommandContext): Promise<unknown>;
}

export interface ModuleEmail {
  name: string;
  description: string;
}

/** One section of a personal-data export: everything the module stores about a user. */
export interface ModuleExporter {
  name: string;
  run(ctx: { app: AppContext; userId: string }): Promise<unknown>;
}

/** Erases (or anonymizes) what the module stores about a user, inside the erasure transaction. */
export interface ModuleEraser {
  name: string;
  run(ctx: { app: AppContext; userId: string; transaction: Transaction }): Promise<void>;
}

/**
 * Asked inside the uninstall transaction. Throws (an AppError, 409) to refuse; with `force` it makes
 * the refusal's cause go away instead and says what it did in `notices`. `afterCommit` runs once the
 * uninstall is committed (cache clean-up).
 */
export type ModuleUninstallGuard = (ctx: {
  app: AppContext;
  force: boolean;
  transaction: Transaction;
}) => Promise<{ notices?: string[]; afterCommit?: () => Promise<void> } | void>;

export interface ModuleManifest {
  id: string;
  /** x.y.z; a higher version in the registry than the installed one offers an update. */
  version: string;
  description: string;
  /** Ids of modules that must be installed first. */
  requires: string[];
  /** Settings, every key with a default; stored overrides live in the settings table. */
  config: z.ZodObject | null;
  migrations: MigrationDef[];
  routes: RouteDef<any, any, any>[];
  hooks: ModuleHook[];
  jobs: JobDef[];
  emails: ModuleEmail[];
  userFields: UserFieldDef[];
  commands: ModuleCommand[];
  /** Tables the module's migrations create (checked against the migrations' SQL at dry-run). */
  tables: string[];
  exporters: ModuleExporter[];
  erasers: ModuleEraser[];
  beforeUninstall?: ModuleUninstallGuard;
}

export type ModuleInput = Omit<ModuleManifest, 'userFields' | 'exporters' | 'erasers' | 'tables'> & {
  userFields: ModuleUserField[];
  tables?: string[];
  exporters?: ModuleExporter[];
  erasers?: ModuleEraser[];
};

export const MODULE_ID_RE = /^[a-z][a-z0-9-]{0,62}[a-z0-9]$/;
const SEMVER_RE = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const SQL_NAME_RE = /^[a-z][a-z0-9_]{0,62}$/;

const fn = (what: string) => z.custom<(...a: any[]) => unknown>((v) => typeof v === 'function', `${what} must be a function`);
const moduleId = z.string().regex(MODULE_ID_RE, 'must be lower-case letters, digits and hyphens');
const named = z.string().min(1).max(100);

const manifestSchema = z.strictObject({
  id: moduleId,
  version: z.string().regex(SEMVER_RE, 'must be a version x.y.z'),
  description: z.string().min(1).max(300),
  requires: z.array(moduleId),
  config: z.union([z.null(), z.custom<z.ZodObject>((v) => v instanceof z.ZodObject, 'must be a zod object schema')]),
  migrations: z.array(
    z.strictObject({ name: z.string().regex(/^[0-9]{8}-[0-9]{4}-[a-z0-9-]+$/, 'must look like 20261121-1000-add-things'), up: fn('up'), down: fn('down') }),
  ),
  routes: z.array(
    z.custom<RouteDef>(
      (v) => typeof v === 'object' && v !== null && 'handler' in v && 'path' in v && 'method' in v && 'auth' in v,
      'must be a route made with defineRoute',
    ),
  ),
  hooks: z.array(z.strictObject({ event: z.string().regex(/^[a-z][a-z0-9_.]*$/), handler: fn('handler') })),
  jobs: z.array(
    z.strictObject({
      name: z.string().regex(/^[a-z][a-z0-9:-]*$/),
      schedule: z.string().refine((s) => cron.validate(s), 'must be a cron expression'),
      run: fn('run'),
    }),
  ),
  emails: z.array(z.strictObject({ name: named, description: z.string() })),
  userFields: z.array(
    z.strictObject({
      name: z.string().regex(SQL_NAME_RE, 'must be a lower_snake column name'),
      type: z.enum(['string', 'boolean', 'date', 'integer']),
      length: z.number().int().min(1).max(10_000).optional(),
      writeOnly: z.boolean().optional(),
      schema: z.custom<z.ZodType>((v) => v instanceof z.ZodType, 'must be a zod schema').optional(),
      description: z.string().optional(),
    }),
  ),
  commands: z.array(
    z.strictObject({
      name: z.string().regex(/^[a-z][a-z0-9-]*:[a-z][a-z0-9-]*$/, 'must be <module>:<command>'),
      description: z.string().min(1),
      arguments: z.string().optional(),
      options: z.array(z.strictObject({ flags: z.string().min(2), description: z.string() })).optional(),
      run: fn('run'),
    }),
  ),
  tables: z.array(z.string().regex(SQL_NAME_RE)).optional(),
  exporters: z.array(z.strictObject({ name: named, run: fn('run') })).optional(),
  erasers: z.array(z.strictObject({ name: named, run: fn('run') })).optional(),
  beforeUninstall: fn('beforeUninstall').optional(),
});

export class ModuleManifestError extends Error {
  constructor(
    public readonly moduleId: string,
    public readonly problems: string[],
  ) {
    super(`module ${moduleId}: invalid manifest: ${problems.join('; ')}`);
    this.name = 'ModuleManifestError';
  }
}

/** Where two names must be unique inside one manifest. */
function duplicates(values: string[]): string[] {
  const seen = new Set<string>();
  return [...new Set(values.filter((v) => (seen.has(v) ? true : (seen.add(v), false))))];
}

/**
 * Validates a module manifest strictly (unknown keys are refused) and returns it frozen, with each
 * user field stamped with its module. Throws ModuleManifestError listing every problem.
 */
export function defineModule(input: ModuleInput): ModuleManifest {
  const id = typeof input?.id === 'string' ? input.id : '?';
  const parsed = manifestSchema.safeParse(input);
  if (!parsed.success) {
    throw new ModuleManifestError(id, parsed.error.issues.map((i) => `${i.path.join('.') || '(manifest)'}: ${i.message}`));
  }
  const m = parsed.data;
  const problems: string[] = [];
  for (const r of input.routes) {
    if (r.module !== m.id) problems.push(`route ${r.method.toUpperCase()} ${r.path}: must be declared with module: '${m.id}'`);
  }
  for (const d of duplicates(m.migrations.map((x) => x.name))) problems.push(`migration ${d} is declared twice`);
  for (const d of duplicates(m.userFields.map((x) => x.name))) problems.push(`user field ${d} is declared twice`);
  for (const d of duplicates(m.jobs.map((x) => x.name))) problems.push(`job ${d} is declared twice`);
  for (const d of duplicates(m.commands.map((x) => x.name))) problems.push(`command ${d} is declared twice`);
  for (const c of m.commands) if (!c.name.startsWith(`${m.id}:`)) problems.push(`command ${c.name} must start with ${m.id}:`);
  if (m.requires.includes(m.id)) problems.push('a module cannot require itself');
  if (m.config) {
    const defaults = m.config.safeParse({});
    if (!defaults.success) problems.push('config: every setting needs a default');
  }
  if (problems.length) throw new ModuleManifestError(m.id, problems);
  return Object.freeze({
    ...input,
    tables: input.tables ?? [],
    exporters: input.exporters ?? [],
    erasers: input.erasers ?? [],
    userFields: input.userFields.map((f) => Object.freeze({ ...f, module: m.id })),
  });
}
