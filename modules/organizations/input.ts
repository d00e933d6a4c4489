import { z } from 'zod';
import { emailAddress } from '../../src/module-api.js';
import { PERMISSION_RE, ROLE_NAME_RE } from './permissions.js';

const CONTROL = /[\u0000-\u001f\u007f]/;
export const SLUG_RE = /^[a-z0-9][a-z0-9-]{1,62}$/;
/** Slugs that are paths of their own under /auth/organizations, or read as ids. */
const RESERVED = new Set(['invitations', 'deactivate', 'admin', 'new']);
const UUID_LIKE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const slug = z
  .string('must be a string')
  .regex(SLUG_RE, 'must be 2 to 63 lower-case letters, digits and hyphens, starting with a letter or digit')
  .refine((s) => !RESERVED.has(s) && !UUID_LIKE.test(s), 'is reserved');

export const name = z
  .string('must be a string')
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine((v) => !CONTROL.test(v), 'must not contain control characters');

const logo = z.union([
  z.null(),
  z
    .string('must be a URL or null')
    .max(2000, 'must be at most 2000 characters')
    .refine((v) => {
      try {
        const u = new URL(v);
        return u.protocol === 'https:' || u.protocol === 'http:';
      } catch {
        return false;
      }
    }, 'must be an http(s) URL'),
]);

const metadata = z
  .record(z.string(), z.unknown(), 'must be an object')
  .refine((m) => Buffer.byteLength(JSON.stringify(m), 'utf8') <= 8192, 'must be at most 8192 bytes as JSON');

export const createBody = z.strictObject({ name, slug: slug.optional() });
export const updateBody = z
  .strictObject({ name: name.optional(), slug: slug.optional(), logo: logo.optional(), metadata: metadata.optional() })
  .refine((b) => Object.keys(b).length > 0, 'name at least one of name, slug, logo, metadata');

export const roleName = z.string('must be a string').regex(ROLE_NAME_RE, 'must be a lower-case role name (letters, digits, _ and -, at most 64)');
export const permissions = z
  .array(z.string().regex(PERMISSION_RE, 'must be a permission resource:action (e.g. invoices:read)'), 'must be a list of permissions')
  .max(100, 'at most 100 permissions')
  .transform((p) => [...new Set(p)]);

export const roleBody = z.strictObject({ name: roleName, permissions });
export const rolePatch = z.strictObject({ permissions });
export const memberPatch = z.strictObject({ role: roleName });

/** `{id}` (an id or a slug) and the other path parts. */
const ref = z.string().regex(/^[a-z0-9][a-z0-9-]{1,62}$/, 'must be an organization id or slug');
const userId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a user id');
export const orgParams = z.object({ id: ref });
export const memberParams = z.object({ id: ref, user_id: userId });
export const roleParams = z.object({ id: ref, name: roleName });

/** A slug made from a name: lower-case ASCII letters and digits joined by hyphens, or null when nothing is left. */
export function slugFromName(n: string): string | null {
  const s = n
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 56)
    .replace(/-+$/, '');
  return slug.safeParse(s).success ? s : null;
}

export const inviteBody = z.strictObject({ email: emailAddress, role: roleName });
export const acceptBody = z.strictObject({ token: z.string('must be a string').min(1, 'must not be empty').max(200, 'is not an invitation token') });
export const invitationParams = z.object({ id: ref, invitation_id: z.string().regex(/^[0-9a-f-]{36}$/, 'must be an invitation id') });
