import { chmodSync, existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, readConfigFile, type ConfigIssue } from '../config/load-config.js';
import { CONFIG_KEYS, type ConfigKey } from '../config/schema.js';
import { generateSecret } from './secrets.js';

/** Secrets `init` generates when config.json has none; an existing one is never replaced. */
export const GENERATED_SECRETS: ConfigKey[] = ['BRIDGE_VALIDATION_SECRET', 'COOKIE_SECRET'];

export type ConfigValues = Partial<Record<ConfigKey, unknown>>;

export interface ConfigFileChange {
  status: 'created' | 'kept' | 'updated';
  /** Keys whose value this run changed. */
  updated: ConfigKey[];
  /** Secrets this run generated. */
  generated: ConfigKey[];
  /** The file was readable by group or others and has been narrowed to 0600. */
  modeFixed: boolean;
}

/** Checks each value against its key's schema; throws ConfigError naming every wrong key. */
export function validateValues(values: ConfigValues, source: string): void {
  const issues: ConfigIssue[] = [];
  for (const [k, v] of Object.entries(values)) {
    const def = CONFIG_KEYS[k as ConfigKey];
    const r = def.schema.safeParse(v);
    if (!r.success) issues.push({ key: k, source, message: r.error.issues.map((i) => i.message).join('; ') });
  }
  if (issues.length) throw new ConfigError(issues);
}

/** The values in an existing config.json, or null when there is none. Bad JSON or unknown keys: ConfigError. */
export function readExistingConfig(file: string): ConfigValues | null {
  if (!existsSync(file)) return null;
  const { values, issues } = readConfigFile(file);
  if (issues.length) throw new ConfigError(issues);
  return values;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Writes config.json: existing values kept, `set` applied over them, missing secrets generated.
 * Nothing is written when nothing changed. A temp file created with mode 0600 is renamed into
 * place, so the secrets are never readable by others and a crash never leaves half a file.
 */
export function writeConfigFile(file: string, existing: ConfigValues | null, set: ConfigValues): ConfigFileChange {
  const next: ConfigValues = { ...(existing ?? {}) };
  const updated: ConfigKey[] = [];
  for (const [k, v] of Object.entries(set) as [ConfigKey, unknown][]) {
    if (v === undefined || same(next[k], v)) continue;
    if (existing && k in existing) updated.push(k);
    next[k] = v;
  }
  const generated: ConfigKey[] = [];
  for (const k of GENERATED_SECRETS) {
    if (next[k] === undefined || next[k] === '') {
      next[k] = generateSecret();
      generated.push(k);
    }
  }
  const changed = !existing || !same(existing, next);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  if (changed) {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  }
  let modeFixed = false;
  if (statSync(file).mode & 0o077) {
    chmodSync(file, 0o600);
    modeFixed = Boolean(existing);
  }
  return { status: !existing ? 'created' : changed ? 'updated' : 'kept', updated, generated, modeFixed };
}
