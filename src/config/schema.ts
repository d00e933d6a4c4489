import type { z } from 'zod';
import type { KeyDef } from './key-def.js';
import { ACCOUNT_KEYS } from './keys-accounts.js';
import { DELIVERY_KEYS } from './keys-delivery.js';
import { INTEGRATION_KEYS } from './keys-integrations.js';
import { LIMIT_KEYS } from './keys-limits.js';
import { SERVER_KEYS } from './keys-server.js';

export type { KeyDef } from './key-def.js';

/**
 * Every configuration key Gatehouse reads. The operator-facing name (the environment variable, and the
 * key in the data dir's config.json) is the object key; `prop` is the name code uses.
 * The README's configuration reference is checked against this table by a test.
 */

export const CONFIG_KEYS = {
  ...SERVER_KEYS,
  ...ACCOUNT_KEYS,
  ...DELIVERY_KEYS,
  ...LIMIT_KEYS,
  ...INTEGRATION_KEYS,
} satisfies Record<string, KeyDef>;

export type ConfigKey = keyof typeof CONFIG_KEYS;

type Out<K extends ConfigKey> = z.output<(typeof CONFIG_KEYS)[K]['schema']>;
type PropOf<K extends ConfigKey> = (typeof CONFIG_KEYS)[K]['prop'];

export type RateLimitSetting = { points: number; durationSec: number };

/** The validated, frozen configuration. */
export type Config = { readonly [K in ConfigKey as PropOf<K>]: Out<K> } & {
  /** Resolved absolute data dir. */
  readonly dataDirAbs: string;
  /** PUBLIC_URL or the default derived from HOST and PORT, without trailing slash. */
  readonly publicBaseUrl: string;
  /** Where the config file lives. */
  readonly configFile: string;
  /** Module settings and limits from the environment or env file, raw, by name (src/modules/module-env.ts). */
  readonly moduleEnv: Readonly<Record<string, string>>;
};
