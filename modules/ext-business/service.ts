import { z } from 'zod';
import type { ModuleContext, ModuleUserField, Transaction } from '../../src/module-api.js';
import { countryName, isCountryCode, ISO_COUNTRIES } from './countries.js';

// Control characters have no place in a company name and would end up in emails and logs.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A trimmed single-line string of at most `max` characters; '' and null clear the field. */
const clearableText = (max: number, extra?: (s: z.ZodString) => z.ZodType<string, string>) => {
  const base = z
    .string('must be a string')
    .trim()
    .max(max, `must be at most ${max} characters`)
    .refine((v) => !CONTROL.test(v), 'must not contain control characters');
  return z.union([z.null(), z.literal('').transform(() => null), extra ? base.pipe(extra(z.string())) : base]);
};

export const businessSchemas = {
  is_business: z.union([z.null(), z.boolean('must be true or false')]),
  biz_name: clearableText(200),
  biz_country: z.union([
    z.null(),
    z.literal('').transform(() => null),
    z
      .string('must be a string')
      .trim()
      .refine((v) => /^[A-Za-z]{2}$/.test(v) && isCountryCode(v), 'must be an ISO 3166-1 alpha-2 country code such as ES or US')
      .transform((v) => v.toUpperCase()),
  ]),
  biz_state: clearableText(100),
  biz_position: clearableText(100),
  biz_postal_code: clearableText(20, (s) => s.regex(/^[A-Za-z0-9 -]+$/, 'must contain only letters, digits, spaces and hyphens')),
};

/** Refused by a profile update while ext-business is not installed. */
const refusal = 'Business fields (is_business, biz_*) need the ext-business module';

/** The users columns ext-business adds, with the validators PUT /auth/user/me applies. */
export const businessFields: ModuleUserField[] = [
  { name: 'is_business', type: 'boolean', schema: businessSchemas.is_business, refusal, description: 'The account is a business account' },
  { name: 'biz_name', type: 'string', length: 200, schema: businessSchemas.biz_name, refusal, description: 'Company name' },
  { name: 'biz_country', type: 'string', length: 2, schema: businessSchemas.biz_country, refusal, description: 'ISO 3166-1 alpha-2 country code' },
  { name: 'biz_state', type: 'string', length: 100, schema: businessSchemas.biz_state, refusal, description: 'State or region' },
  { name: 'biz_position', type: 'string', length: 100, schema: businessSchemas.biz_position, refusal, description: 'Position in the company' },
  { name: 'biz_postal_code', type: 'string', length: 20, schema: businessSchemas.biz_postal_code, refusal, description: 'Postal code' },
];

export const BUSINESS_COLUMNS = businessFields.map((f) => f.name);

/** Validates business fields in a body; returns the values to store, or the issues by field. */
export function parseBusinessFields(input: Record<string, unknown>): { values: Record<string, unknown>; issues: { field: string; message: string }[] } {
  const values: Record<string, unknown> = {};
  const issues: { field: string; message: string }[] = [];
  for (const name of BUSINESS_COLUMNS) {
    if (!(name in input)) continue;
    const r = businessSchemas[name as keyof typeof businessSchemas].safeParse(input[name]);
    if (r.success) values[name] = r.data;
    else issues.push({ field: name, message: r.error.issues[0]?.message ?? 'invalid' });
  }
  return { values, issues };
}

export const listCountries = () => ISO_COUNTRIES.map((code) => ({ code, name: countryName(code) }));

/** Export and erasure reach the columns even while the module is uninstalled with its data kept. */
export const exportBusiness = ({ ctx, userId }: { ctx: ModuleContext; userId: string }) => ctx.users.ownFields(userId);

export async function eraseBusiness({ ctx, userId, tx }: { ctx: ModuleContext; userId: string; tx: Transaction }) {
  await ctx.users.clearOwnFields(userId, { tx });
}
