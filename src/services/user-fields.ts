import { z } from 'zod';
import { canonicalEmail } from '../data/models/user-columns.js';
import { nestsDeeperThan } from './security/json-depth.js';

/**
 * Validators for user columns, shared by the HTTP bodies and the user service (CLI included).
 * Lengths follow the users table. An empty string means "clear the field" where a field may be
 * cleared, so clients that echo a blank form field back do not fail.
 */

// Control characters have no place in names and would end up in emails and logs.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A trimmed single-line string of at most `max` characters. */
export const text = (max: number) =>
  z
    .string()
    .trim()
    .max(max, `must be at most ${max} characters`)
    .refine((v) => !CONTROL.test(v), 'must not contain control characters');

/** Like `text`, but '' and null clear the field (→ null). */
export const clearable = <T extends z.ZodType<string | null>>(inner: T) => z.union([z.null(), z.literal('').transform(() => null), inner]);

export const EMAIL_MAX = 254;
/** The one email rule: canonical form (user-columns.ts), at most 254 characters, a real address. */
export const emailField = z.string().overwrite(canonicalEmail).max(EMAIL_MAX, `must be at most ${EMAIL_MAX} characters`).pipe(z.email('Invalid email format'));

export const USER_NAME_RE = /^[A-Za-z0-9._-]{3,50}$/;
export const userNameField = z.string().trim().regex(USER_NAME_RE, 'must be 3 to 50 characters: letters, digits, dot, underscore or hyphen');

export const phoneField = text(32).refine(
  (v) => /^\+?[0-9 ().-]+$/.test(v) && (v.match(/[0-9]/g)?.length ?? 0) >= 3,
  'must be a phone number (digits, spaces, + - . ( ))',
);

export const langField = text(16).regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'must be a language code such as en or pt-BR');

/** A real calendar day between 1900-01-01 and today (UTC). */
export function isValidDob(v: string, today = new Date()): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return false;
  const todayUtc = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  return y >= 1900 && t <= todayUtc;
}
export const dobField = z
  .string()
  .trim()
  .refine((v) => isValidDob(v), 'must be a real date YYYY-MM-DD between 1900 and today');

/** The canonical IANA name of a zone ("america/new_york" → "America/New_York"), or null. */
export function canonicalTimeZone(v: string): string | null {
  // Offsets such as "+01:00" are not zone names; Intl may accept them in newer Node versions.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(v) || v.length > 64) return null;
  try {
    return new Intl.DateTimeFormat('en', { timeZone: v }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}
export const tmzField = z
  .string()
  .trim()
  .transform((v, ctx) => {
    const zone = canonicalTimeZone(v);
    if (!zone) {
      ctx.addIssue({ code: 'custom', message: 'must be an IANA time zone such as Europe/Madrid' });
      return z.NEVER;
    }
    return zone;
  });

export const METADATA_MAX_BYTES = 8192;
export const METADATA_MAX_DEPTH = 32;

// Depth first: the size check stringifies, which recursion-deep input would overflow.
export const metadataField = z.record(z.string(), z.unknown(), 'must be an object').superRefine((v, ctx) => {
  if (nestsDeeperThan(v, METADATA_MAX_DEPTH)) {
    ctx.addIssue({ code: 'custom', message: `must nest at most ${METADATA_MAX_DEPTH} levels deep` });
  } else if (Buffer.byteLength(JSON.stringify(v), 'utf8') > METADATA_MAX_BYTES) {
    ctx.addIssue({ code: 'custom', message: `must be at most ${METADATA_MAX_BYTES} bytes as JSON` });
  }
});

export const USER_TYPES = ['customer', 'writer', 'admin', 'superadmin'] as const;
export const userTypeField = z.enum(USER_TYPES, `must be one of ${USER_TYPES.join(', ')}`);

/** Fields a user may change on their own profile, with their validators. */
export const profileFields = {
  name: clearable(text(100)),
  last_name: clearable(text(100)),
  user_name: clearable(userNameField),
  phone: clearable(phoneField),
  dob: clearable(dobField),
  gender: clearable(text(32)),
  title: clearable(text(100)),
  reference_id: clearable(text(100)),
  recovery_email: clearable(emailField),
  tmz: clearable(tmzField),
  metadata: z.union([z.null(), metadataField]),
  lang: clearable(langField),
  display_name: clearable(text(100)),
};
export const profileSchema = z.strictObject(profileFields).partial();
export type ProfilePatch = z.output<typeof profileSchema>;

const bool = z.boolean('must be true or false');

/** What the admin bodies have always answered for input that is no object (an array, a string). */
const notAnObject = { error: (issue: { code?: string }) => (issue.code === 'invalid_type' ? 'Body must be a JSON object' : undefined) };

/** What an admin (or the CLI) may set when creating a user; the password policy is checked apart. */
export const createUserSchema = z.strictObject(
  {
    email: emailField,
    password: z.union([z.null(), z.string()]).optional(),
    name: clearable(text(100)).optional(),
    last_name: clearable(text(100)).optional(),
    user_name: clearable(userNameField).optional(),
    user_type: userTypeField
      .describe("The new user's role (default customer). Only a superadmin may create an admin or a superadmin: an admin gets 403 FORBIDDEN")
      .optional(),
    phone: clearable(phoneField).optional(),
    title: clearable(text(100)).optional(),
    lang: clearable(langField).optional(),
    is_verified: bool.optional(),
  },
  notAnObject,
);

/** What an admin (or the CLI) may change on a user. `disabled` sets or clears disabled_at. */
export const adminUpdateSchema = z.strictObject(
  {
    name: clearable(text(100)).optional(),
    last_name: clearable(text(100)).optional(),
    user_name: clearable(userNameField).optional(),
    email: emailField.optional(),
    phone: clearable(phoneField).optional(),
    user_type: userTypeField
      .describe(
        "The user's role. Only a superadmin may change it (not their own): an admin's request that would is refused whole with 403 FORBIDDEN, its other fields unwritten",
      )
      .optional(),
    is_verified: bool.optional(),
    two_factor: bool.optional(),
    title: clearable(text(100)).optional(),
    lang: clearable(langField).optional(),
    disabled: bool.optional(),
  },
  notAnObject,
);
/** What a caller may pass to `users.adminUpdate` (validated there). */
export type AdminUpdateInput = z.input<typeof adminUpdateSchema>;
/** An update already parsed by `adminUpdateSchema` (the admin route's body): `users.adminUpdateParsed` takes it as it is. */
export type AdminUpdate = z.output<typeof adminUpdateSchema>;

/** What a caller may pass to `users.create` (validated there): the CLI, init, social sign-up. */
export type CreateUserInput = z.input<typeof createUserSchema>;
/** A user already parsed by `createUserSchema` (the admin route's body): `users.createParsed` takes it as it is. */
export type NewUser = z.output<typeof createUserSchema>;

/**
 * Public registration, parsed once (the route's body; `auth.registerPublic` takes the output). Keys
 * it does not name — `user_type`, `is_verified` — are dropped: public sign-ups are unverified customers.
 */
export const registerPublicSchema = z.object({
  email: z.string('email is required').pipe(emailField),
  password: z.string('password is required'),
  ...createUserSchema.pick({ name: true, last_name: true, user_name: true, phone: true, lang: true }).shape,
});
export type PublicRegistration = z.output<typeof registerPublicSchema>;
