import { plaintextBackend } from './backend-tls.js';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parseEnvFile } from './env-file.js';
import { CONFIG_KEYS, type Config, type ConfigKey } from './schema.js';

export const CONFIG_FILE_NAME = 'config.json';

export interface ConfigIssue {
  key: string;
  message: string;
  source: string;
}

/** Raised when configuration is invalid; carries every wrong key with how to fix it. */
export class ConfigError extends Error {
  constructor(public readonly issues: ConfigIssue[]) {
    super(
      'Invalid configuration:\n' +
        issues.map((i) => `  - ${i.key} (from ${i.source}): ${i.message}`).join('\n') +
        '\nFix the values above (environment, config file, or flags); see "Configuration" in README.md.',
    );
    this.name = 'ConfigError';
  }
}

export interface LoadConfigOptions {
  /** Environment to read (defaults to process.env). */
  env?: Record<string, string | undefined>;
  /** Values from CLI flags, keyed by operator name (e.g. { PORT: '9000' }). */
  flags?: Partial<Record<ConfigKey, unknown>>;
  /** Base directory for a relative data dir (defaults to process.cwd()). */
  cwd?: string;
  /** Skip reading the config file (init uses this before the file exists). */
  skipFile?: boolean;
  /** Names of module settings to take from the environment and env file as given (moduleEnvNames). */
  moduleEnv?: readonly string[];
}

const isKey = (k: string): k is ConfigKey => Object.prototype.hasOwnProperty.call(CONFIG_KEYS, k);

/** Reads `config.json` from a data dir. Unknown keys are reported, not ignored. */
export function readConfigFile(file: string): { values: Record<string, unknown>; issues: ConfigIssue[] } {
  if (!existsSync(file)) return { values: {}, issues: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { values: {}, issues: [{ key: file, source: 'config file', message: `not valid JSON: ${(err as Error).message}` }] };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { values: {}, issues: [{ key: file, source: 'config file', message: 'must hold a JSON object' }] };
  }
  const issues: ConfigIssue[] = [];
  const values: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (!isKey(k)) issues.push({ key: k, source: file, message: 'unknown key; remove it or check the spelling' });
    else values[k] = v;
  }
  return { values, issues };
}

function fromEnv(env: Record<string, string | undefined>, issues: ConfigIssue[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(CONFIG_KEYS) as ConfigKey[]) {
    const fileVar = env[`${k}_FILE`];
    if (fileVar) {
      try {
        out[k] = readFileSync(fileVar, 'utf8').trim();
      } catch (err) {
        issues.push({ key: `${k}_FILE`, source: 'environment', message: `cannot read ${fileVar}: ${(err as NodeJS.ErrnoException).code ?? err}` });
      }
    }
    if (env[k] !== undefined && env[k] !== '') out[k] = env[k];
  }
  return out;
}

function readEnvFile(file: string, issues: ConfigIssue[]): { values: Record<string, unknown>; raw: Record<string, string> } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    const why = code === 'EACCES' ? ' (run as root or as the service user)' : '';
    issues.push({ key: 'GATEHOUSE_ENV_FILE', source: file, message: `cannot read ${file}: ${code}${why}` });
    return { values: {}, raw: {} };
  }
  const raw = parseEnvFile(text);
  return { values: fromEnv(raw, issues), raw };
}

/** The named module settings, env file first and the environment over it. */
function pickModuleEnv(names: readonly string[], ...layers: Record<string, string | undefined>[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const layer of layers) {
    for (const n of names) {
      const v = layer[n];
      if (v !== undefined && v !== '' && !isKey(n)) out[n] = v;
    }
  }
  return Object.freeze(out);
}

/**
 * Loads configuration in layers — defaults < config file < env file < environment < flags — validates it once
 * and returns a frozen object. Throws ConfigError listing every wrong key.
 */
export function loadConfig(opts: LoadConfigOptions = {}): Config {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const issues: ConfigIssue[] = [];
  const sources: Record<string, string> = {};

  const envValues = fromEnv(env, issues);
  const flagValues: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(opts.flags ?? {})) if (v !== undefined) flagValues[k] = v;

  const dataDir = String(flagValues.GATEHOUSE_DATA_DIR ?? envValues.GATEHOUSE_DATA_DIR ?? CONFIG_KEYS.GATEHOUSE_DATA_DIR.default);
  const dataDirAbs = path.resolve(cwd, dataDir);
  const configFile = path.join(dataDirAbs, CONFIG_FILE_NAME);
  const file = opts.skipFile ? { values: {}, issues: [] } : readConfigFile(configFile);
  issues.push(...file.issues);
  // The service's environment file, named by a flag, the environment or config.json (install.sh records
  // it there), so every command — doctor included — sees the configuration the service runs with.
  const envFile = flagValues.GATEHOUSE_ENV_FILE ?? envValues.GATEHOUSE_ENV_FILE ?? file.values.GATEHOUSE_ENV_FILE;
  const fromEnvFile = typeof envFile === 'string' && envFile ? readEnvFile(envFile, issues) : { values: {}, raw: {} };
  const envFileValues = fromEnvFile.values;

  const merged: Record<string, unknown> = {};
  for (const [k, def] of Object.entries(CONFIG_KEYS)) {
    if ('default' in def && def.default !== undefined) {
      merged[k] = def.default;
      sources[k] = 'default';
    }
  }
  const layers = [
    ['config file', file.values],
    [`env file ${String(envFile)}`, envFileValues],
    ['environment', envValues],
    ['flag', flagValues],
  ] as const;
  for (const [layer, values] of layers) {
    for (const [k, v] of Object.entries(values)) {
      merged[k] = v;
      sources[k] = layer;
    }
  }

  const out: Record<string, unknown> = {};
  for (const [k, def] of Object.entries(CONFIG_KEYS)) {
    const res = (def.schema as z.ZodTypeAny).safeParse(merged[k]);
    if (res.success) out[def.prop] = res.data;
    else issues.push({ key: k, source: sources[k] ?? 'default', message: res.error.issues.map((i) => i.message).join('; ') });
  }
  // Without verification a new registration answers with a session, which a taken address cannot be
  // given: the two answers would differ, so the setting could not do what it says.
  if (out.registrationEnumerationSafe === true && out.requireEmailVerification !== true) {
    issues.push({
      key: 'REGISTRATION_ENUMERATION_SAFE',
      source: sources.REGISTRATION_ENUMERATION_SAFE ?? 'default',
      message: 'needs REQUIRE_EMAIL_VERIFICATION=true (without it a new registration is answered with a session, which a taken address cannot get)',
    });
  }
  // Credentials and data cross the network in clear to a backend on another host unless TLS is asked for (ASVS 12.3.1).
  if (out.allowPlaintextBackends !== true) {
    for (const [k, prop] of [
      ['DATABASE_URL', 'databaseUrl'],
      ['REDIS_URL', 'redisUrl'],
    ] as const) {
      const problem = typeof out[prop] === 'string' ? plaintextBackend(out[prop]) : null;
      if (problem) issues.push({ key: k, source: sources[k] ?? 'default', message: problem });
    }
  }
  if (issues.length) throw new ConfigError(issues);

  out.dataDir = dataDir;
  out.dataDirAbs = dataDirAbs;
  out.configFile = configFile;
  out.moduleEnv = pickModuleEnv(opts.moduleEnv ?? [], fromEnvFile.raw, env);
  const host = out.host === '0.0.0.0' || out.host === '::' ? 'localhost' : out.host;
  out.publicBaseUrl = String(out.publicUrl ?? `http://${host}:${out.port}`).replace(/\/+$/, '');
  return Object.freeze(out) as Config;
}

/** Human-readable description of every key, for README and `--help`. */
export function describeKeys(): { name: string; group: string; doc: string; default?: unknown; secret: boolean }[] {
  return Object.entries(CONFIG_KEYS).map(([name, d]) => ({
    name,
    group: d.group,
    doc: d.doc,
    default: 'default' in d ? d.default : undefined,
    secret: Boolean('secret' in d && d.secret),
  }));
}
