import type { Config, RateLimitSetting } from '../config/schema.js';
import { rateLimit } from '../config/readers.js';
import type { LimitRule } from './rate-limiter.js';

/*
 * The rate-limit classes, as data: core's (below) and every class a module declares in its manifest's
 * `rateLimits`, in one table that the route middleware, the module context and `gatehouse limits reset`
 * read. A module's class is named `module:<module id>:<declared name>`, so it can neither count in a
 * core class nor in another module's; a route names its class by that full name. The operator sets a
 * class's budget with `RATE_LIMIT_<NAME>` ("attempts/window"): core's are configuration keys, a
 * module's is read from the environment by its declared name (`two-factor-user` →
 * RATE_LIMIT_TWO_FACTOR_USER, as it always was).
 */

/** Configuration properties that hold a budget ("attempts/window"). */
type RuleSetting = { [K in keyof Config]-?: Config[K] extends RateLimitSetting ? K : never }[keyof Config];

/** Core's classes and the configuration key (RATE_LIMIT_<CLASS>) that sets each budget. */
export const CORE_LIMIT_CLASSES = {
  default: 'rateLimitDefault',
  login: 'rateLimitLogin',
  registration: 'rateLimitRegistration',
  'token-login': 'rateLimitTokenLogin',
  'token-validate': 'rateLimitTokenValidate',
  'email-change': 'rateLimitEmailChange',
  'social-login': 'rateLimitSocialLogin',
  'social-api': 'rateLimitSocialApi',
  'cache-invalidation': 'rateLimitCacheInvalidation',
  admin: 'rateLimitAdmin',
  bridge: 'rateLimitBridge',
  'bridge-invalid': 'rateLimitBridgeInvalid',
  session: 'rateLimitSession',
  'oidc-authorization': 'rateLimitOidcAuthorization',
  'oidc-token': 'rateLimitOidcToken',
  'oidc-client-auth': 'rateLimitOidcClientAuth',
} as const satisfies Record<string, RuleSetting>;

export type CoreLimitClass = keyof typeof CORE_LIMIT_CLASSES;
/** A class a module declares: `module:<module id>:<declared name>`. */
export type ModuleLimitClass = `module:${string}:${string}`;
/** A class a route may declare: core's or a module's. */
export type RateLimitClass = CoreLimitClass | ModuleLimitClass;

export const moduleLimitClass = (moduleId: string, name: string): ModuleLimitClass => `module:${moduleId}:${name}`;

const isCoreClass = (cls: string): cls is CoreLimitClass => Object.prototype.hasOwnProperty.call(CORE_LIMIT_CLASSES, cls);

const envName = (s: string) => s.toUpperCase().replace(/[^A-Z0-9]+/g, '_');

/** The environment variable of a class by its core or declared name: `token-login` → RATE_LIMIT_TOKEN_LOGIN. */
export const limitEnvName = (name: string) => `RATE_LIMIT_${envName(name)}`;

/** A module class's budget from the environment, or null (a bad value is a problem, the default stays). */
export function envLimit(name: string, env: Readonly<Record<string, string>>): { rule: RateLimitSetting | null; problem?: string } {
  const variable = limitEnvName(name);
  const raw = env[variable];
  if (raw === undefined) return { rule: null };
  const r = rateLimit.safeParse(raw);
  return r.success
    ? { rule: r.data }
    : { rule: null, problem: `${variable}=${JSON.stringify(raw.slice(0, 40))}: expected "attempts/window", e.g. 5/15m; ignored` };
}

/** What the table needs of a module manifest. */
export interface LimitDeclaring {
  id: string;
  rateLimits: readonly { name: string; points: number; durationSec: number; description: string }[];
}

export interface LimitClass {
  name: RateLimitClass;
  /** RATE_LIMIT_<…>: the operator's word on the budget. */
  env: string;
  rule: LimitRule;
  /** True when the budget comes from the operator (RATE_LIMIT_<…>) rather than a default. */
  fromOperator: boolean;
  /** The module that declares it; undefined for core's. */
  module?: string;
}

export interface LimitClassTable {
  /** The class of that name; throws for a name no one declared (a route names only declared classes). */
  get(cls: string): LimitClass;
  has(cls: string): boolean;
  /** Every class, core's first. */
  all(): readonly LimitClass[];
}

export type LimitTableConfig = Pick<Config, RuleSetting | 'moduleEnv'>;

export function createLimitClassTable(config: LimitTableConfig, modules: readonly LimitDeclaring[]): LimitClassTable {
  const byName = new Map<string, LimitClass>();
  for (const [name, setting] of Object.entries(CORE_LIMIT_CLASSES)) {
    byName.set(name, { name: name as CoreLimitClass, env: limitEnvName(name), rule: config[setting], fromOperator: false });
  }
  for (const m of modules) {
    for (const r of m.rateLimits) {
      const operator = envLimit(r.name, config.moduleEnv ?? {}).rule;
      const name = moduleLimitClass(m.id, r.name);
      byName.set(name, {
        name,
        env: limitEnvName(r.name),
        rule: operator ?? { points: r.points, durationSec: r.durationSec },
        fromOperator: Boolean(operator),
        module: m.id,
      });
    }
  }
  const all = Object.freeze([...byName.values()]);
  return {
    get(cls) {
      const c = byName.get(cls);
      if (!c)
        throw new Error(`rate-limit class ${cls} is not declared (core's: ${Object.keys(CORE_LIMIT_CLASSES).join(', ')}; a module's: module:<id>:<name>)`);
      return c;
    },
    has: (cls) => byName.has(cls),
    all: () => all,
  };
}

/**
 * Where a module route's class may come from: core's, or the module's own declared ones. Returns the
 * problem, or null.
 */
export function classProblem(cls: string, module: LimitDeclaring): string | null {
  if (isCoreClass(cls)) return null;
  const own = module.rateLimits.some((r) => cls === moduleLimitClass(module.id, r.name));
  if (own) return null;
  return cls.startsWith('module:') && !cls.startsWith(`module:${module.id}:`)
    ? `rate-limit class ${cls} belongs to another module`
    : `rate-limit class ${cls} is neither core's nor declared in the manifest's rateLimits (as module:${module.id}:<name>)`;
}

/** A declared name whose variable would be a core class's (RATE_LIMIT_LOGIN …): refused, so the operator's names stay one meaning each. */
export const takesCoreName = (name: string): boolean => isCoreClass(name) || name === 'login-account';

const tables = new WeakMap<object, { modules: readonly LimitDeclaring[]; table: LimitClassTable }>();

/**
 * The table of a configuration and the module registry of the moment (the registry can be replaced
 * at run time): rebuilt only when the registry hands out different manifests.
 */
export function limitClassesOf(config: LimitTableConfig, modules: readonly LimitDeclaring[]): LimitClassTable {
  const hit = tables.get(config);
  if (hit && hit.modules.length === modules.length && hit.modules.every((m, i) => m === modules[i])) return hit.table;
  const table = createLimitClassTable(config, modules);
  tables.set(config, { modules, table });
  return table;
}
