import type { z } from 'zod';
import { envLimit, limitEnvName } from '../limits/limit-classes.js';
import type { ModuleManifest } from './define-module.js';

export { envLimit, limitEnvName };

/**
 * Module settings from the environment. Every key of a module's config schema can be set by the
 * operator as `<MODULE>_<KEY>` (id and key upper-cased, hyphens as underscores: key `enabled` of a
 * module `my-mod` is `MY_MOD_ENABLED`), and every rate-limit class a module declares as
 * `RATE_LIMIT_<CLASS>` ("attempts/window", like core's). The environment wins over the settings
 * stored with `gatehouse module install --set` (as it does over config.json for core keys).
 */
const envName = (s: string) => s.toUpperCase().replace(/[^A-Z0-9]+/g, '_');

export const settingEnvName = (moduleId: string, key: string) => `${envName(moduleId)}_${envName(key)}`;

/**
 * The environment names of one setting, the one that wins first: `<MODULE>_<KEY>`, then the name the
 * setting's schema gives in its metadata (`.meta({ env: 'TRUSTED_DEVICE_TTL' })`), so a setting that moved
 * from core into a module keeps the name operators already use.
 */
export function settingEnvNames(moduleId: string, key: string, schema: z.ZodType): string[] {
  const alias = (schema.meta() as { env?: unknown } | undefined)?.env;
  return typeof alias === 'string' && alias ? [settingEnvName(moduleId, key), alias] : [settingEnvName(moduleId, key)];
}

/** Every environment name the registry's modules read (for loadConfig's `moduleEnv`). */
export function moduleEnvNames(registry: readonly Pick<ModuleManifest, 'id' | 'config' | 'rateLimits'>[]): string[] {
  return registry.flatMap((m) => [
    ...Object.entries(m.config?.shape ?? {}).flatMap(([k, schema]) => settingEnvNames(m.id, k, schema)),
    ...(m.rateLimits ?? []).map((r) => limitEnvName(r.name)),
  ]);
}

/** What a raw environment string may mean for a setting: itself, JSON (numbers, lists), or a yes/no word. */
function readings(raw: string): unknown[] {
  const out: unknown[] = [raw];
  const word = raw.trim().toLowerCase();
  if (['true', 'yes', 'on', '1'].includes(word)) out.push(true);
  if (['false', 'no', 'off', '0'].includes(word)) out.push(false);
  try {
    out.push(JSON.parse(raw));
  } catch {
    // not JSON: a comma list is a list of strings
    if (raw.includes(',')) out.push(raw.split(',').map((s) => s.trim()));
  }
  return out;
}

/**
 * The module's settings given in the environment, each read as its schema's type; names whose
 * value fits no reading are returned as problems (the stored or default value stays).
 */
export function envSettings(
  manifest: Pick<ModuleManifest, 'id' | 'config'>,
  env: Readonly<Record<string, string>>,
): { values: Record<string, unknown>; problems: string[] } {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, schema] of Object.entries(manifest.config?.shape ?? {})) {
    const name = settingEnvNames(manifest.id, key, schema).find((n) => env[n] !== undefined);
    if (name === undefined) continue;
    const raw = env[name];
    const fit = readings(raw)
      .map((v) => schema.safeParse(v))
      .find((r) => r.success);
    if (fit) values[key] = fit.data;
    else problems.push(`${name}=${JSON.stringify(raw.slice(0, 40))} does not fit the setting ${manifest.id}.${key}; ignored`);
  }
  return { values, problems };
}

/** Every module setting and limit budget in the environment that fits no reading (each is ignored). */
export function envProblems(registry: readonly Pick<ModuleManifest, 'id' | 'config' | 'rateLimits'>[], env: Readonly<Record<string, string>>): string[] {
  return registry.flatMap((m) => [
    ...envSettings(m, env).problems,
    ...m.rateLimits.map((r) => envLimit(r.name, env).problem).filter((p): p is string => Boolean(p)),
  ]);
}
