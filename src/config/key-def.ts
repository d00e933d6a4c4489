import type { z } from 'zod';

/** One configuration key: the name code uses, its group, its reader, its documentation (schema.ts CONFIG_KEYS). */
export interface KeyDef {
  prop: string;
  schema: z.ZodTypeAny;
  default?: unknown;
  secret?: boolean;
  doc: string;
  group: string;
}

export function key<P extends string, S extends z.ZodTypeAny>(
  prop: P,
  group: string,
  schema: S,
  doc: string,
  extra: Partial<KeyDef> = {},
): KeyDef & { prop: P; schema: S } {
  return { ...extra, prop, group, schema, doc };
}
