import { z } from 'zod';
import type { UserFieldDef } from '../data/models/user.model.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { AppError, badRequest } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import { issueMessage } from '../errors/zod-issues.js';
import { BUSINESS_FIELDS, PRIVACY_FIELDS, clearable, isAcquisitionField, profileFields, profileSchema, text } from './user-fields.js';

/** A module's user field may carry its own validator (set by the module's manifest). */
type FieldWithSchema = UserFieldDef & { schema?: z.ZodType };

export interface ProfileInputContext {
  current: UserRecord;
  businessInstalled: boolean;
  extraFields: UserFieldDef[];
}

/** 400 VALIDATION_ERROR naming the first bad field, with every issue in `details`. */
export function invalidInput(err: z.ZodError, prefix?: string): AppError {
  const details = err.issues.map((i) => ({
    field: [prefix, ...i.path.map(String)].filter(Boolean).join('.') || null,
    message: issueMessage(i),
  }));
  const first = details[0];
  return badRequest(first?.field ? `${first.field}: ${first.message}` : (first?.message ?? 'Invalid input'), details);
}

const notAllowed = (field: string, message: string) => new AppError(400, Codes.FIELD_NOT_ALLOWED, message, [{ field, message }]);

/**
 * Turns a profile update body into column values, refusing what the profile route does not own:
 * acquisition and privacy fields (other routes), business fields without ext-business, email changes,
 * and anything unknown. `picture` is ignored: clients echo it back, and only the upload route sets it.
 */
export function parseProfileInput(raw: unknown, ctx: ProfileInputContext): Partial<UserRecord> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('Body must be a JSON object');
  const input = raw as Record<string, unknown>;
  const core: Record<string, unknown> = {};
  const business: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    if (isAcquisitionField(k)) {
      throw notAllowed(k, `${k} is accepted only by POST /auth/user/me/onboarding/complete`);
    }
    if ((PRIVACY_FIELDS as readonly string[]).includes(k)) {
      throw notAllowed(k, `${k} is managed through the /auth/user/me/privacy routes`);
    }
    if ((BUSINESS_FIELDS as readonly string[]).includes(k)) business[k] = v;
    else if (k === 'picture') continue;
    else if (k === 'email') {
      const same = typeof v === 'string' && v.trim().toLowerCase() === ctx.current.email.toLowerCase();
      if (!same) throw notAllowed('email', 'Email cannot be changed through the profile; ask an administrator');
    } else if (k in profileFields) core[k] = v;
    else throw badRequest(`Unknown field: ${k}`, [{ field: k, message: 'unknown field' }]);
  }

  const parsed = profileSchema.safeParse(core);
  if (!parsed.success) throw invalidInput(parsed.error);
  const patch: Record<string, unknown> = { ...parsed.data };

  const names = Object.keys(business);
  if (names.length) {
    const defs = new Map(ctx.extraFields.map((f) => [f.name, f as FieldWithSchema]));
    if (!ctx.businessInstalled || names.some((n) => !defs.has(n))) {
      throw new AppError(400, Codes.MODULE_NOT_INSTALLED, 'Business fields (is_business, biz_*) need the ext-business module', [
        { field: names[0], message: 'module ext-business is not installed' },
      ]);
    }
    for (const n of names) {
      const def = defs.get(n)!;
      const schema = def.schema ?? (def.type === 'boolean' ? z.union([z.null(), z.boolean()]) : clearable(text(def.length ?? 255)));
      const r = schema.safeParse(business[n]);
      if (!r.success) throw invalidInput(r.error, n);
      patch[n] = r.data;
    }
  }
  return patch as Partial<UserRecord>;
}
