import type { Transaction } from 'sequelize';
import { z } from 'zod';
import type { AppContext } from '../../src/app-context.js';
import type { ModuleUserField } from '../../src/modules/define-module.js';
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

/** The users columns ext-business adds, with the validators PUT /auth/user/me applies. */
export const businessFields: ModuleUserField[] = [
  { name: 'is_business', type: 'boolean', schema: businessSchemas.is_business, description: 'The account is a business account' },
  { name: 'biz_name', type: 'string', length: 200, schema: businessSchemas.biz_name, description: 'Company name' },
  { name: 'biz_country', type: 'string', length: 2, schema: businessSchemas.biz_country, description: 'ISO 3166-1 alpha-2 country code' },
  { name: 'biz_state', type: 'string', length: 100, schema: businessSchemas.biz_state, description: 'State or region' },
  { name: 'biz_position', type: 'string', length: 100, schema: businessSchemas.biz_position, description: 'Position in the company' },
  { name: 'biz_postal_code', type: 'string', length: 20, schema: businessSchemas.biz_postal_code, description: 'Postal code' },
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

export async function exportBusiness({ app, userId }: { app: AppContext; userId: string }) {
  const [rows] = await app.sequelize.query(`SELECT ${BUSINESS_COLUMNS.join(', ')} FROM users WHERE id = ?`, { replacements: [userId] });
  const row = (rows as Record<string, unknown>[])[0] ?? null;
  if (row && row.is_business !== null && row.is_business !== undefined) row.is_business = row.is_business === true || row.is_business === 1;
  return row;
}

export async function eraseBusiness({ app, userId, transaction }: { app: AppContext; userId: string; transaction: Transaction }) {
  await app.sequelize.query(`UPDATE users SET ${BUSINESS_COLUMNS.map((c) => `${c} = NULL`).join(', ')} WHERE id = ?`, {
    replacements: [userId],
    transaction,
  });
}
