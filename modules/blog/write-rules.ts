import { isAdmin } from './access.js';
import { AppError, forbidden, type ModuleContext, type Transaction, type UserRecord } from '../../src/module-api.js';
import { json, type Row } from './posts-read.js';
import type { PostInput } from './posts-write.js';
import type { BodyFormat } from './render.js';
import type { PostTypeRules, Visibility } from './types.js';

/** A post type's behaviours applied to a write: what it may set, its defaults, review and max_per_author. */

/** Where a writer's post waits when its type requires approval (an admin publishes it). */
export const PENDING = 'pending';
export const SEO_FIELDS = ['meta_title', 'meta_description', 'canonical_url', 'og_image'] as const;

export const refused = (code: string, field: string, message: string) => new AppError(400, code, `${field}: ${message}`, [{ field, message }]);

/**
 * The type's behaviours on what this write sets (on a new post, or a post changing type, on all of
 * it). Answers the post's field values to store (undefined: unchanged).
 */
export function checkType(t: PostTypeRules, input: PostInput, existing: Row | null): Record<string, unknown> | undefined {
  const b = t.behaviors;
  const whole = !existing || (input.post_type !== undefined && input.post_type !== existing.post_type);
  const format = input.body_format ?? (whole ? (existing?.body_format ?? defaultFormat(t)) : undefined);
  if (format && !b.allowed_body_formats.includes(format)) {
    throw refused('BODY_FORMAT_NOT_ALLOWED', 'body_format', `posts of type "${t.type_key}" take ${b.allowed_body_formats.join(', ')}`);
  }
  const visibility = input.visibility ?? (whole ? existing?.visibility : undefined);
  if (visibility === 'password' && !b.allows_password_visibility) {
    throw refused('PASSWORD_VISIBILITY_DISABLED', 'visibility', `posts of type "${t.type_key}" cannot be protected by a password`);
  }
  const scheduling = input.status === 'scheduled' || input.scheduled_at !== undefined || (whole && existing?.status === 'scheduled');
  if (scheduling && !b.enables_scheduling) {
    throw refused('SCHEDULING_DISABLED', input.scheduled_at !== undefined ? 'scheduled_at' : 'status', `posts of type "${t.type_key}" cannot be scheduled`);
  }
  for (const f of SEO_FIELDS) {
    if (!b.enables_seo && input[f] !== undefined && input[f] !== null) {
      throw refused('SEO_DISABLED', f, `posts of type "${t.type_key}" have no SEO fields`);
    }
  }
  if (input.fields !== undefined) return t.checkFields(input.fields);
  if (whole) return t.checkFields(existing ? json(existing.fields) : {});
  return undefined;
}

export const defaultFormat = (t: PostTypeRules): BodyFormat =>
  t.behaviors.allowed_body_formats.includes('markdown') ? 'markdown' : (t.behaviors.allowed_body_formats[0] ?? 'markdown');

/** A new post's visibility when it names none: the type's default_visibility, else public_by_default. */
export const defaultVisibility = (t: PostTypeRules): Visibility => t.behaviors.default_visibility ?? (t.behaviors.public_by_default ? 'public' : 'auth');

/** A writer publishing or scheduling a post whose type requires approval sends it to review instead. */
export const reviewed = (t: PostTypeRules, user: UserRecord, status: string): string =>
  t.behaviors.requires_approval && !isAdmin(user) && (status === 'published' || status === 'scheduled') ? PENDING : status;

/**
 * max_per_author, exact under concurrent creates: inside the write's transaction, writers of one
 * author and type take turns (an advisory lock on PostgreSQL; SQLite transactions write one at a time).
 */
export async function assertQuota(ctx: ModuleContext, t: PostTypeRules, authorId: string, tx: Transaction, exceptPostId = ''): Promise<void> {
  const max = t.behaviors.max_per_author;
  if (!max) return;
  if (ctx.db.dialect === 'postgres') await ctx.db.exec('SELECT pg_advisory_xact_lock(hashtext(?))', [`blog-quota:${authorId}:${t.type_key}`], { tx });
  const [c] = await ctx.db.select<{ n: number | string }>(
    'SELECT COUNT(*) AS n FROM blog_posts WHERE author_id = ? AND post_type = ? AND deleted_at IS NULL AND id <> ?',
    [authorId, t.type_key, exceptPostId],
    { tx },
  );
  if (Number(c?.n ?? 0) >= max) {
    throw forbidden(`An author may have at most ${max} posts of type "${t.type_key}"`, 'POST_TYPE_LIMIT_REACHED');
  }
}
