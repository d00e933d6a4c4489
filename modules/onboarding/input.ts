import { z } from 'zod';
import { AppError, badRequest, Codes, type UserFieldDef } from '../../src/module-api.js';

const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const str = (max: number, multiline = false) =>
  z.union([
    z.null(),
    z
      .string('must be a string')
      .trim()
      .max(max, `must be at most ${max} characters`)
      .refine((v) => !(multiline ? CONTROL : /[\u0000-\u001f\u007f]/).test(v), 'must not contain control characters')
      .transform((v) => (v === '' ? null : v)),
  ]);

/** Write-only columns of onboarding_profiles with their validators. */
const WRITE_ONLY: Record<string, z.ZodType<string | null>> = {
  acquisition_source: str(200),
  acquisition_medium: str(200),
  acquisition_campaign: str(200),
  acquisition_referrer: str(500),
  acquisition_details: str(2000, true),
  team_size_range: z.union([
    z.null(),
    z
      .string('must be a string')
      .trim()
      .regex(/^[A-Za-z0-9 +<>.,-]{1,32}$/, 'must be a size range such as 1-10 or 500+'),
  ]),
};
/** Other acquisition_* keys (UTM term, content, …) are kept together, write-only as well. */
const EXTRA_KEY = /^acquisition_[a-z0-9_]{1,50}$/;
const MAX_EXTRA_KEYS = 20;
const extraValue = str(500);

export const isBusinessField = (k: string) => k === 'is_business' || k.startsWith('biz_');

export interface SplitInput {
  writeOnly: Record<string, string | null>;
  extra: Record<string, string | null>;
  business: Record<string, unknown>;
  /** Keys that are neither write-only nor business (step data). */
  rest: Record<string, unknown>;
}

/**
 * Sorts a body into write-only acquisition data, business fields (validated with ext-business's own
 * field schemas; refused with module_not_installed when it is not installed) and the rest.
 * `unknown: 'reject'` refuses any other key (the completion routes); 'keep' returns them (step data).
 */
export function splitInput(body: unknown, businessFields: UserFieldDef[] | null, unknown: 'reject' | 'keep'): SplitInput {
  if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) throw badRequest('Body must be a JSON object');
  const input = (body ?? {}) as Record<string, unknown>;
  const out: SplitInput = { writeOnly: {}, extra: {}, business: {}, rest: {} };
  const issues: { field: string; message: string }[] = [];
  const check = (field: string, schema: z.ZodType, value: unknown, into: Record<string, unknown>) => {
    const r = schema.safeParse(value);
    if (r.success) into[field] = r.data;
    else issues.push({ field, message: r.error.issues[0]?.message ?? 'invalid' });
  };
  const businessKeys = Object.keys(input).filter(isBusinessField);
  if (businessKeys.length && !businessFields) {
    throw new AppError(400, Codes.MODULE_NOT_INSTALLED, 'Business fields (is_business, biz_*) need the ext-business module', [
      { field: businessKeys[0], message: 'module ext-business is not installed' },
    ]);
  }
  for (const [k, v] of Object.entries(input)) {
    if (Object.hasOwn(WRITE_ONLY, k)) check(k, WRITE_ONLY[k], v, out.writeOnly);
    else if (EXTRA_KEY.test(k)) check(k, extraValue, v, out.extra);
    else if (isBusinessField(k)) {
      // Non-null: business keys without businessFields were refused above (MODULE_NOT_INSTALLED).
      const def = businessFields!.find((f) => f.name === k);
      if (!def?.schema) issues.push({ field: k, message: 'unknown business field' });
      else check(k, def.schema, v, out.business);
    } else if (unknown === 'keep') out.rest[k] = v;
    else issues.push({ field: k, message: 'is not accepted here' });
  }
  if (Object.keys(out.extra).length > MAX_EXTRA_KEYS) issues.push({ field: 'acquisition_*', message: `at most ${MAX_EXTRA_KEYS} extra acquisition fields` });
  if (issues.length) throw badRequest(`${issues[0].field}: ${issues[0].message}`, issues);
  return out;
}
