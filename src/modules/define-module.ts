import { CORE_AUDIT_TYPES } from '../audit/event-types.js';
import cron from 'node-cron';
import { z } from 'zod';
import type { MigrationDef } from '../data/migration-types.js';
import { classProblem, limitEnvName, takesCoreName } from '../limits/limit-classes.js';
import type { UserFieldDef } from '../data/models/user.model.js';
import type { Transaction } from '../data/unit-of-work.js';
import type { AnyModuleRouteDef, ModuleRouteDef } from './module-route.js';
import type { ModuleContext } from './module-context.js';
import type { HookPayload } from './hooks.js';
import type { AuditEvent } from '../audit/audit-types.js';
import { webSchema, type ModuleWeb } from './module-web.js';

/** A users column a module contributes; `module` is filled in from the manifest. */
export type ModuleUserField = Omit<UserFieldDef, 'module'>;

/**
 * A handler for one event: a catalogue event (hooks.ts HookEvents, such as `auth.login` or
 * `user.updated`) gets its typed payload; a module's own event (`<id>.<what>`) a record.
 */
export interface ModuleHook<E extends string = string> {
  event: E;
  /** Only payloads it matches reach the handler. */
  when?(payload: HookPayload<E>): boolean;
  handler(payload: HookPayload<E>, ctx: ModuleContext): Promise<void> | void;
}

/**
 * A hook as the runtime keeps it, whatever its event: it hands each handler the payload of the event
 * it subscribed to, so the payload is `unknown` here (method syntax: any ModuleHook<E> fits).
 */
export interface RegisteredHook {
  event: string;
  when?(payload: unknown): boolean;
  handler(payload: unknown, ctx: ModuleContext): Promise<void> | void;
}

export interface ModuleCommandContext {
  ctx: ModuleContext;
  args: string[];
  options: Record<string, unknown>;
  /** Human output (suppressed with --json). */
  print(line: string): void;
}

/** A CLI command a module adds: `gatehouse <name> [arguments]`, available while it is installed. */
export interface ModuleCommand {
  /** Namespaced with the module id: `<module>:<command>`. */
  name: string;
  description: string;
  /** commander argument spec, e.g. `<email>`. */
  arguments?: string;
  options?: { flags: string; description: string }[];
  /**
   * Also offered inside a core command group, where operators look for it: `['user', '<group>', '<command>']`
   * is `gatehouse user <group> <command>` (only the `user` group takes module commands).
   */
  alias?: string[];
  /** The value returned is printed with --json. */
  run(ctx: ModuleCommandContext): Promise<unknown>;
}

/** A message the module sends: modules/<id>/emails/<lang>/<name>.html and .txt, subject in strings.json. */
export interface ModuleEmail {
  name: string;
  description: string;
  /** Data keys the message cannot do without. */
  requires?: string[];
}

/** A scheduled job; it runs with the module's own context. */
export interface ModuleJob {
  name: string;
  /** node-cron expression. */
  schedule: string;
  run(ctx: ModuleContext): Promise<string>;
}

/** One section of a personal-data export: everything the module stores about a user. */
export interface ModuleExporter {
  name: string;
  run(args: { ctx: ModuleContext; userId: string }): Promise<unknown>;
}

/** Erases (or anonymizes) what the module stores about a user, inside the erasure transaction. */
export interface ModuleEraser {
  name: string;
  run(args: { ctx: ModuleContext; userId: string; tx: Transaction }): Promise<void>;
}

/** A rate-limit class the module's routes use, with its default budget (operators override it in settings). */
export interface ModuleRateLimit {
  /** Namespaced by convention: `<module>-<what>`, e.g. `two-factor-verify`. */
  name: string;
  points: number;
  durationSec: number;
  description: string;
}

/** An error code the module answers with (listed in the API reference). */
export interface ModuleErrorCode {
  code: string;
  status: 400 | 401 | 403 | 404 | 409 | 429 | 500 | 503;
  description: string;
}

/** A security event the module writes (ctx.audit.record): `<module id>.<what>`, past tense. */
export interface ModuleAuditEvent {
  type: string;
  description: string;
}

/** A doctor check the module adds (`gatehouse doctor`), run while it is installed. */
export interface ModuleDoctorCheck {
  name: string;
  run(ctx: ModuleContext): Promise<{ ok: boolean; message: string }>;
}

/** Keys a profile update (PUT /auth/user/me) must refuse with the module's message: `{field}` is the key. */
export interface ProfileRefusal {
  names?: string[];
  prefix?: string;
  message: string;
}

/**
 * Asked inside the uninstall transaction. Throws (an AppError, 409) to refuse; with `force` it makes
 * the refusal's cause go away instead and says what it did in `notices`. `afterCommit` runs once the
 * uninstall is committed (cache clean-up).
 */
export type ModuleUninstallGuard = (args: {
  ctx: ModuleContext;
  force: boolean;
  tx: Transaction;
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
  routes: AnyModuleRouteDef[];
  hooks: RegisteredHook[];
  jobs: ModuleJob[];
  emails: ModuleEmail[];
  userFields: UserFieldDef[];
  commands: ModuleCommand[];
  /** Tables the module's migrations create: the only ones its context's db reaches. */
  tables: string[];
  exporters: ModuleExporter[];
  erasers: ModuleEraser[];
  rateLimits: ModuleRateLimit[];
  errorCodes: ModuleErrorCode[];
  doctorChecks: ModuleDoctorCheck[];
  profileRefusals: ProfileRefusal[];
  /** Event types the module writes to the security-event record (src/audit). */
  auditEvents: ModuleAuditEvent[];
  /** Where the module's email templates live; default modules/<id>/emails in the package. */
  emailDir?: string;
  beforeUninstall?: ModuleUninstallGuard;
  /**
   * The module's sign-ins may prove two factors at once (a user-verified passkey: possession and
   * verification): only such a module may call `ctx.signIn` with `{ factors: 2 }`.
   */
  provesTwoFactors?: boolean;

  // Events (issue 61): the module's rows of the event table (src/app-events.ts).
  /**
   * Reactions to committed security events (core's catalogue, src/audit/event-types.ts, or a module's
   * `auditEvents`): each runs after the event's transaction commits, while the module is installed and
   * switched on, with its context; a failing one is logged, never the change's error.
   */
  events?: ModuleEventReaction[];

  /** The pages, account sections, console pages and user-page panels it brings (module-web.ts). */
  web?: ModuleWeb;
}

/** One reaction of a module to security events (the manifest's `events`). */
export interface ModuleEventReaction {
  /** Event types it answers, e.g. `['user.disabled', 'password.changed']`. */
  on: string[];
  handler(event: AuditEvent, ctx: ModuleContext): Promise<void> | void;
}

type Optional =
  | 'tables'
  | 'exporters'
  | 'erasers'
  | 'rateLimits'
  | 'errorCodes'
  | 'doctorChecks'
  | 'profileRefusals'
  | 'auditEvents'
  | 'hooks'
  | 'jobs'
  | 'emails'
  | 'commands'
  | 'migrations'
  | 'routes'
  | 'requires'
  | 'config';

/**
 * What a module declares; empty contributions may be left out. `Events` are the events of its hooks,
 * in order, inferred by defineModule so each handler gets its event's payload.
 */
export type ModuleInput<Events extends readonly string[] = string[]> = Omit<ModuleManifest, 'userFields' | 'hooks' | Optional> & {
  userFields?: ModuleUserField[];
  hooks?: { [K in keyof Events]: ModuleHook<Events[K]> };
} & Partial<Pick<ModuleManifest, Exclude<Optional, 'hooks'>>>;

export const MODULE_ID_RE = /^[a-z][a-z0-9-]{0,62}[a-z0-9]$/;
const SEMVER_RE = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const SQL_NAME_RE = /^[a-z][a-z0-9_]{0,62}$/;

const fn = (what: string) => z.custom<(...a: never[]) => unknown>((v) => typeof v === 'function', `${what} must be a function`);
const moduleId = z.string().regex(MODULE_ID_RE, 'must be lower-case letters, digits and hyphens');
const named = z.string().min(1).max(100);

const EMPTY = {
  requires: [],
  config: null,
  migrations: [],
  routes: [],
  hooks: [],
  jobs: [],
  emails: [],
  userFields: [],
  commands: [],
  tables: [],
  exporters: [],
  erasers: [],
  rateLimits: [],
  errorCodes: [],
  doctorChecks: [],
  profileRefusals: [],
  auditEvents: [],
};

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
    z.custom<ModuleRouteDef>(
      (v) => typeof v === 'object' && v !== null && 'handler' in v && 'path' in v && 'method' in v && 'auth' in v,
      'must be a route made with defineRoute',
    ),
  ),
  hooks: z.array(z.strictObject({ event: z.string().regex(/^[a-z][a-z0-9_.]*$/), handler: fn('handler'), when: fn('when').optional() })),
  jobs: z.array(
    z.strictObject({
      name: z.string().regex(/^[a-z][a-z0-9:-]*$/),
      schedule: z.string().refine((s) => cron.validate(s), 'must be a cron expression'),
      run: fn('run'),
    }),
  ),
  emails: z.array(
    z.strictObject({
      name: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'must be a lower-case file name'),
      description: z.string(),
      requires: z.array(z.string()).optional(),
    }),
  ),
  userFields: z.array(
    z.strictObject({
      name: z.string().regex(SQL_NAME_RE, 'must be a lower_snake column name'),
      type: z.enum(['string', 'boolean', 'date', 'integer']),
      length: z.number().int().min(1).max(10_000).optional(),
      writeOnly: z.boolean().optional(),
      schema: z.custom<z.ZodType>((v) => v instanceof z.ZodType, 'must be a zod schema').optional(),
      refusal: z.string().min(1).max(300).optional(),
      description: z.string().optional(),
    }),
  ),
  commands: z.array(
    z.strictObject({
      name: z.string().regex(/^[a-z][a-z0-9-]*:[a-z][a-z0-9-]*$/, 'must be <module>:<command>'),
      description: z.string().min(1),
      arguments: z.string().optional(),
      options: z.array(z.strictObject({ flags: z.string().min(2), description: z.string() })).optional(),
      alias: z.tuple([z.literal('user'), z.string().regex(/^[a-z][a-z0-9-]*$/), z.string().regex(/^[a-z][a-z0-9-]*$/)]).optional(),
      run: fn('run'),
    }),
  ),
  tables: z.array(z.string().regex(SQL_NAME_RE)).optional(),
  exporters: z.array(z.strictObject({ name: named, run: fn('run') })).optional(),
  erasers: z.array(z.strictObject({ name: named, run: fn('run') })).optional(),
  rateLimits: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[a-z][a-z0-9-]{1,62}$/),
        points: z.number().int().min(1),
        durationSec: z.number().int().min(1),
        description: z.string().min(1),
      }),
    )
    .optional(),
  errorCodes: z
    .array(
      z.strictObject({
        code: z.string().regex(/^[A-Za-z][A-Za-z0-9_]{1,63}$/),
        status: z.union([400, 401, 403, 404, 409, 429, 500, 503].map((n) => z.literal(n)) as [z.ZodLiteral<400>, ...z.ZodLiteral<number>[]]),
        description: z.string().min(1),
      }),
    )
    .optional(),
  doctorChecks: z.array(z.strictObject({ name: named, run: fn('run') })).optional(),
  emailDir: z.string().min(1).optional(),
  profileRefusals: z
    .array(
      z
        .strictObject({ names: z.array(z.string()).optional(), prefix: z.string().min(1).optional(), message: z.string().min(1).max(300) })
        .refine((r) => r.names?.length || r.prefix, 'needs names or prefix'),
    )
    .optional(),
  auditEvents: z
    .array(z.strictObject({ type: z.string().regex(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9_]*)+$/, 'must be <module id>.<what>'), description: z.string().min(1) }))
    .optional(),
  beforeUninstall: fn('beforeUninstall').optional(),
  provesTwoFactors: z.boolean().optional(),
  // Events (issue 61).
  events: z.array(z.strictObject({ on: z.array(z.string().regex(/^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_]*)+$/)).min(1), handler: fn('handler') })).optional(),
  web: webSchema.optional(),
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
export function defineModule<const Events extends readonly string[] = []>(input: ModuleInput<Events>): ModuleManifest {
  const id = typeof input?.id === 'string' ? input.id : '?';
  const parsed = manifestSchema.safeParse({ ...EMPTY, ...input });
  if (!parsed.success) {
    throw new ModuleManifestError(
      id,
      parsed.error.issues.map((i) => `${i.path.join('.') || '(manifest)'}: ${i.message}`),
    );
  }
  const m = parsed.data;
  const problems: string[] = [];
  for (const r of m.routes) {
    if (r.module !== m.id) problems.push(`route ${r.method.toUpperCase()} ${r.path}: must be declared with module: '${m.id}'`);
  }
  for (const d of duplicates(m.migrations.map((x) => x.name))) problems.push(`migration ${d} is declared twice`);
  for (const d of duplicates(m.userFields.map((x) => x.name))) problems.push(`user field ${d} is declared twice`);
  for (const d of duplicates(m.jobs.map((x) => x.name))) problems.push(`job ${d} is declared twice`);
  for (const d of duplicates(m.commands.map((x) => x.name))) problems.push(`command ${d} is declared twice`);
  for (const c of m.commands) if (!c.name.startsWith(`${m.id}:`)) problems.push(`command ${c.name} must start with ${m.id}:`);
  for (const e of m.auditEvents ?? []) if (!e.type.startsWith(`${m.id}.`)) problems.push(`audit event ${e.type} must start with ${m.id}.`);
  // A module named like a core family (`password`, `user`) must not declare core's own types.
  for (const e of m.auditEvents ?? []) if (e.type in CORE_AUDIT_TYPES) problems.push(`audit event ${e.type} is one of core's`);
  for (const d of duplicates((m.auditEvents ?? []).map((x) => x.type))) problems.push(`audit event ${d} is declared twice`);
  if (m.requires.includes(m.id)) problems.push('a module cannot require itself');
  if (m.config) {
    const defaults = m.config.safeParse({});
    if (!defaults.success) problems.push('config: every setting needs a default');
  }
  for (const d of duplicates((m.rateLimits ?? []).map((x) => x.name))) problems.push(`rate-limit class ${d} is declared twice`);
  for (const r of m.rateLimits ?? [])
    if (takesCoreName(r.name)) problems.push(`rate-limit class ${r.name} has a core class's name (${limitEnvName(r.name)} is core's); choose another`);
  // A route counts in a core class or one of the module's own (module:<id>:<name>), never another module's.
  const own = { id: m.id, rateLimits: m.rateLimits ?? [] };
  for (const r of m.routes) {
    const classes = typeof r.rateLimit === 'string' ? [r.rateLimit] : r.rateLimit ? r.rateLimit.classes : [];
    for (const cls of classes) {
      const problem = classProblem(cls, own);
      if (problem) problems.push(`route ${r.method.toUpperCase()} ${r.path}: ${problem}`);
    }
  }
  if (problems.length) throw new ModuleManifestError(m.id, problems);
  return Object.freeze({
    ...EMPTY,
    ...input,
    userFields: (input.userFields ?? []).map((f) => Object.freeze({ ...f, module: m.id })),
  }) as ModuleManifest;
}
