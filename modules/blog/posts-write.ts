import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { assertCanManage, isAdmin, isWriter, type PostAccessRow } from './access.js';
import { recordPost, type AuditedPost } from './audit.js';
import { AppError, badRequest, forbidden, notFound, type ModuleContext, type Transaction, type UserRecord } from '../../src/module-api.js';
import { isUniqueViolation } from '../../src/module-api.js';
import { langSchema, loadPost, type Row } from './posts-read.js';
import { BODY_FORMATS, makeExcerpt, renderBody, RESERVED_SLUGS, SLUG_RE, slugFrom, type BodyFormat } from './render.js';
import { resolveCategories, resolveTags } from './taxonomy.js';
import { forgetTotals } from './totals.js';
import { assertQuota, checkType, defaultFormat, defaultVisibility, PENDING, refused, reviewed, SEO_FIELDS } from './write-rules.js';
import { DEFAULT_TYPE, postTypeKey, rulesForWrite, rulesOf } from './types.js';

const MAX_BODY = 500_000;
export const POST_STATUSES = ['draft', 'scheduled', 'published', 'archived'] as const;
export const VISIBILITIES = ['public', 'auth', 'private', 'password'] as const;

const slugField = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(200)
  .regex(SLUG_RE, 'must be lower-case letters, digits and single hyphens')
  .refine((s) => !RESERVED_SLUGS.has(s), 'is reserved');
const dateField = z
  .string()
  .trim()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 date')
  .transform((s) => new Date(s));
const termList = z.array(z.string().trim().min(1).max(120)).max(20);
const webUrl = z
  .string()
  .trim()
  .max(2000)
  .refine((s) => /^https?:\/\/[^\s]+$/i.test(s) && URL.canParse(s), 'must be an http(s) URL');

const fields = {
  title: z.string().trim().min(1, 'must not be empty').max(300),
  slug: slugField,
  body: z.string().max(MAX_BODY),
  content: z.string().max(MAX_BODY),
  body_format: z.enum(BODY_FORMATS),
  excerpt: z.string().trim().max(1000).nullable(),
  status: z.enum(POST_STATUSES),
  visibility: z.enum(VISIBILITIES),
  password: z.string().min(4, 'must be at least 4 characters').max(200),
  lang: langSchema,
  metadata: z.record(z.string(), z.unknown()).nullable(),
  categories: termList,
  tags: termList,
  scheduled_at: dateField,
  published_at: dateField,
  post_type: postTypeKey,
  fields: z.record(z.string(), z.unknown()),
  meta_title: z.string().trim().max(300).nullable(),
  meta_description: z.string().trim().max(500).nullable(),
  canonical_url: webUrl.nullable(),
  og_image: webUrl.nullable(),
};

export const createSchema = z
  .strictObject({ ...fields, title: fields.title })
  .partial()
  .required({ title: true });
export const updateSchema = z
  .strictObject(fields)
  .partial()
  .refine((b) => Object.keys(b).length > 0, 'send at least one field to change');
export type PostInput = z.output<typeof updateSchema>;

const METADATA_MAX = 16_384;

function checkInput(input: PostInput, existing: Row | null): void {
  if (input.metadata && JSON.stringify(input.metadata).length > METADATA_MAX) {
    throw badRequest(`metadata: must be at most ${METADATA_MAX} bytes of JSON`, [{ field: 'metadata', message: 'too large' }]);
  }
  const visibility = input.visibility ?? existing?.visibility;
  if (visibility === 'password' && !input.password && !existing?.password_hash) {
    throw badRequest('password: required for visibility "password"', [{ field: 'password', message: 'required for visibility password' }]);
  }
  if (input.password && visibility !== 'password') {
    throw badRequest('password: only with visibility "password"', [{ field: 'password', message: 'only with visibility password' }]);
  }
  if (input.status === 'scheduled' && !input.scheduled_at && !existing?.scheduled_at) {
    throw badRequest('scheduled_at: required for status "scheduled"', [{ field: 'scheduled_at', message: 'required for status scheduled' }]);
  }
  if (input.scheduled_at && input.scheduled_at.getTime() <= Date.now() && (input.status ?? existing?.status) === 'scheduled') {
    throw badRequest('scheduled_at: must be in the future', [{ field: 'scheduled_at', message: 'must be in the future' }]);
  }
}

/** Whether a slug is free in a language (current slugs and the old ones of other posts). */
async function slugFree(ctx: ModuleContext, slug: string, lang: string, postId: string | null, t?: Transaction): Promise<boolean> {
  const taken = await ctx.db.select(
    'SELECT 1 AS x FROM blog_posts WHERE lang = ? AND slug = ? AND id <> ? UNION ALL SELECT 1 AS x FROM blog_post_slugs WHERE lang = ? AND slug = ? AND post_id <> ?',
    [lang, slug, postId ?? '', lang, slug, postId ?? ''],
    { tx: t },
  );
  return taken.length === 0;
}

/** The slug itself when free, else the first free `slug-2`, `slug-3`, … */
async function freeSlug(ctx: ModuleContext, base: string, lang: string, postId: string | null, t: Transaction): Promise<string> {
  if (await slugFree(ctx, base, lang, postId, t)) return base;
  const like = `${base.slice(0, 190)}-%`;
  const used = new Set(
    (
      await ctx.db.select<{ slug: string }>(
        'SELECT slug FROM blog_posts WHERE lang = ? AND slug LIKE ? UNION SELECT slug FROM blog_post_slugs WHERE lang = ? AND slug LIKE ?',
        [lang, like, lang, like],
        { tx: t },
      )
    ).map((r) => r.slug),
  );
  for (let n = 2; n < 1000; n++) {
    const s = `${base.slice(0, 190)}-${n}`;
    if (!used.has(s)) return s;
  }
  return `${base.slice(0, 180)}-${randomUUID().slice(0, 8)}`;
}

const slugTaken = (slug: string) =>
  new AppError(400, 'SLUG_TAKEN', `slug: "${slug}" is already used by another post in this language`, [{ field: 'slug', message: 'already used' }]);

async function setTerms(ctx: ModuleContext, postId: string, input: PostInput, user: UserRecord, t: Transaction): Promise<void> {
  if (input.categories) {
    const ids = await resolveCategories(ctx, input.categories, t);
    await ctx.db.exec('DELETE FROM blog_post_categories WHERE post_id = ?', [postId], { tx: t });
    for (const id of ids) await ctx.db.exec('INSERT INTO blog_post_categories (post_id, category_id) VALUES (?, ?)', [postId, id], { tx: t });
  }
  if (input.tags) {
    const ids = await resolveTags(ctx, input.tags, user, t);
    await ctx.db.exec('DELETE FROM blog_post_tags WHERE post_id = ?', [postId], { tx: t });
    for (const id of ids) await ctx.db.exec('INSERT INTO blog_post_tags (post_id, tag_id) VALUES (?, ?)', [postId, id], { tx: t });
  }
}

const auditedPost = (row: Row, postType: string): AuditedPost => ({ id: row.id as string, author_id: row.author_id as string, post_type: postType });

export async function createPost(ctx: ModuleContext, user: UserRecord, input: z.output<typeof createSchema>): Promise<string> {
  if (!isWriter(user)) throw forbidden('Writer role required');
  const type = await rulesForWrite(ctx, input.post_type ?? DEFAULT_TYPE);
  const visibility = input.visibility ?? defaultVisibility(type);
  checkInput({ ...input, visibility }, null);
  const fieldValues = checkType(type, { ...input, visibility }, null) ?? {};
  const id = randomUUID();
  const now = new Date();
  const format: BodyFormat = input.body_format ?? defaultFormat(type);
  const body = input.body ?? input.content ?? '';
  const lang = input.lang ?? 'en';
  const status = reviewed(type, user, input.status ?? 'draft');
  const passwordHash = visibility === 'password' && input.password ? await ctx.passwords.hash(input.password) : null;
  const publishedAt = status === 'published' ? (input.published_at ?? now) : null;
  try {
    await ctx.db.transaction(async (t) => {
      await assertQuota(ctx, type, user.id, t);
      let slug = input.slug ?? slugFrom(input.title);
      if (input.slug) {
        if (!(await slugFree(ctx, slug, lang, null, t))) throw slugTaken(slug);
      } else slug = await freeSlug(ctx, slug, lang, null, t);
      await ctx.db.exec(
        `INSERT INTO blog_posts (id, slug, title, body, body_format, body_html, excerpt, status, visibility, password_hash, lang, metadata,
          author_id, view_count, published_at, scheduled_at, created_at, updated_at,
          post_type, fields, meta_title, meta_description, canonical_url, og_image)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          id,
          slug,
          input.title,
          body,
          format,
          renderBody(body, format),
          input.excerpt ?? makeExcerpt(body, format),
          status,
          visibility,
          passwordHash,
          lang,
          JSON.stringify(input.metadata ?? {}),
          user.id,
          publishedAt,
          status === 'scheduled' ? input.scheduled_at : null,
          now,
          now,
          type.type_key,
          JSON.stringify(fieldValues),
          input.meta_title ?? null,
          input.meta_description ?? null,
          input.canonical_url ?? null,
          input.og_image ?? null,
        ],
        { tx: t },
      );
      await setTerms(ctx, id, input, user, t);
      if (status === 'published') await recordPost(ctx, 'published', { id, author_id: user.id, post_type: type.type_key }, user, t);
    });
  } catch (err) {
    // Two writers raced for the same generated slug: the unique index refused the second.
    if (isUniqueViolation(err)) throw slugTaken(input.slug ?? slugFrom(input.title));
    throw err;
  }
  forgetTotals(ctx);
  return id;
}

export async function updatePost(ctx: ModuleContext, user: UserRecord, postId: string, input: PostInput): Promise<void> {
  const row = await loadPost(ctx, postId);
  if (row.deleted_at) throw notFound('Post not found');
  assertCanManage(user, row as PostAccessRow);
  checkInput(input, row);
  const retyped = input.post_type !== undefined && input.post_type !== row.post_type;
  const type = retyped && input.post_type !== undefined ? await rulesForWrite(ctx, input.post_type) : await rulesOf(ctx, row.post_type);
  const fieldValues = checkType(type, input, row);
  const set: Record<string, unknown> = {};
  if (input.title !== undefined) set.title = input.title;
  if (retyped) set.post_type = type.type_key;
  if (fieldValues !== undefined) set.fields = JSON.stringify(fieldValues);
  for (const f of SEO_FIELDS) if (input[f] !== undefined) set[f] = input[f];
  const format: BodyFormat = input.body_format ?? row.body_format;
  const body = input.body ?? input.content;
  if (body !== undefined || input.body_format) {
    const text = body ?? row.body;
    Object.assign(set, { body: text, body_format: format, body_html: renderBody(text, format) });
    if (input.excerpt === undefined && body !== undefined) set.excerpt = makeExcerpt(text, format);
  }
  if (input.excerpt !== undefined) set.excerpt = input.excerpt ?? makeExcerpt(body ?? row.body, format);
  if (input.visibility) set.visibility = input.visibility;
  if (input.visibility && input.visibility !== 'password') set.password_hash = null;
  if (input.password) set.password_hash = await ctx.passwords.hash(input.password);
  if (input.metadata !== undefined) set.metadata = JSON.stringify(input.metadata ?? {});
  const status = input.status ? reviewed(type, user, input.status) : undefined;
  if (status) {
    set.status = status;
    if (status === 'published') set.published_at = input.published_at ?? row.published_at ?? new Date();
    if (status !== 'scheduled') set.scheduled_at = null;
  }
  if (input.scheduled_at && (status ?? row.status) === 'scheduled') set.scheduled_at = input.scheduled_at;
  if (input.published_at && !input.status) set.published_at = input.published_at;
  if (input.lang) set.lang = input.lang;
  try {
    await ctx.db.transaction(async (t) => {
      if (retyped) await assertQuota(ctx, type, row.author_id, t, postId);
      // The address is decided on what is stored once any rename of this post before it committed (an
      // advisory lock on PostgreSQL; SQLite transactions write one at a time): two renames at once must
      // each keep the address the other left, not the one both read before.
      if (ctx.db.dialect === 'postgres') await ctx.db.exec('SELECT pg_advisory_xact_lock(hashtext(?))', [`blog-post:${postId}`], { tx: t });
      const [now] = await ctx.db.select<{ slug: string; lang: string }>('SELECT slug, lang FROM blog_posts WHERE id = ?', [postId], { tx: t });
      if (!now) throw notFound('Post not found');
      const lang = input.lang ?? now.lang;
      const slug = input.slug ?? now.slug;
      if (slug !== now.slug || lang !== now.lang) {
        if (!(await slugFree(ctx, slug, lang, postId, t))) throw slugTaken(slug);
        set.slug = slug;
        // The old address keeps answering (the post, with redirect_to naming the new slug).
        await ctx.db.exec('DELETE FROM blog_post_slugs WHERE post_id = ? AND lang = ? AND slug = ?', [postId, lang, slug], { tx: t });
        await ctx.db.exec('DELETE FROM blog_post_slugs WHERE lang = ? AND slug = ?', [now.lang, now.slug], { tx: t });
        await ctx.db.exec(
          'INSERT INTO blog_post_slugs (id, post_id, lang, slug, created_at) VALUES (?, ?, ?, ?, ?)',
          [randomUUID(), postId, now.lang, now.slug, new Date()],
          { tx: t },
        );
      }
      set.updated_at = new Date();
      const cols = Object.keys(set);
      await ctx.db.exec(`UPDATE blog_posts SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...cols.map((c) => set[c]), postId], { tx: t });
      await setTerms(ctx, postId, input, user, t);
      if (status === 'published' && row.status !== 'published') await recordPost(ctx, 'published', auditedPost(row, type.type_key), user, t);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw slugTaken(input.slug ?? row.slug);
    throw err;
  }
  forgetTotals(ctx);
}

/** Publish, unpublish, schedule: the author's or an admin's. */
export async function changeStatus(
  ctx: ModuleContext,
  user: UserRecord,
  postId: string,
  to: 'published' | 'draft' | 'scheduled',
  scheduledAt?: Date,
): Promise<void> {
  const row = await loadPost(ctx, postId);
  if (row.deleted_at) throw notFound('Post not found');
  assertCanManage(user, row as PostAccessRow);
  const type = await rulesOf(ctx, row.post_type);
  if (to === 'scheduled' && !type.behaviors.enables_scheduling) {
    throw refused('SCHEDULING_DISABLED', 'scheduled_at', `posts of type "${type.type_key}" cannot be scheduled`);
  }
  const now = new Date();
  if (reviewed(type, user, to) === PENDING) {
    await ctx.db.exec("UPDATE blog_posts SET status = 'pending', scheduled_at = NULL, updated_at = ? WHERE id = ?", [now, postId]);
  } else if (to === 'published') {
    await ctx.db.transaction(async (tx) => {
      await ctx.db.exec(
        "UPDATE blog_posts SET status = 'published', published_at = COALESCE(published_at, ?), scheduled_at = NULL, updated_at = ? WHERE id = ?",
        [now, now, postId],
        { tx },
      );
      if (row.status !== 'published') await recordPost(ctx, 'published', auditedPost(row, type.type_key), user, tx);
    });
  } else if (to === 'draft') {
    await ctx.db.exec("UPDATE blog_posts SET status = 'draft', scheduled_at = NULL, updated_at = ? WHERE id = ?", [now, postId]);
  } else {
    if (!scheduledAt || scheduledAt.getTime() <= now.getTime()) {
      throw badRequest('scheduled_at: must be in the future', [{ field: 'scheduled_at', message: 'must be in the future' }]);
    }
    await ctx.db.exec("UPDATE blog_posts SET status = 'scheduled', scheduled_at = ?, updated_at = ? WHERE id = ?", [scheduledAt, now, postId]);
  }
  forgetTotals(ctx);
}

export async function deletePost(ctx: ModuleContext, user: UserRecord, postId: string): Promise<void> {
  const row = await loadPost(ctx, postId);
  if (row.deleted_at) throw notFound('Post not found');
  assertCanManage(user, row as PostAccessRow);
  const now = new Date();
  await ctx.db.transaction(async (tx) => {
    await ctx.db.exec('UPDATE blog_posts SET deleted_at = ?, updated_at = ? WHERE id = ?', [now, now, postId], { tx });
    await recordPost(ctx, 'deleted', auditedPost(row, row.post_type as string), user, tx);
  });
  forgetTotals(ctx);
}

export async function restorePost(ctx: ModuleContext, user: UserRecord, postId: string): Promise<void> {
  if (!isAdmin(user)) throw forbidden('Admin role required');
  const row = await loadPost(ctx, postId);
  if (!row.deleted_at) throw badRequest('Post is not deleted', undefined, 'POST_NOT_DELETED');
  const type = await rulesOf(ctx, row.post_type);
  await ctx.db.transaction(async (t) => {
    // A restored post counts again towards its author's max_per_author.
    await assertQuota(ctx, type, row.author_id, t, postId);
    await ctx.db.exec('UPDATE blog_posts SET deleted_at = NULL, updated_at = ? WHERE id = ?', [new Date(), postId], { tx: t });
  });
  forgetTotals(ctx);
}

/** Publishes scheduled posts that are due; returns how many. Safe to run twice (the update is conditional). */
export async function publishDue(ctx: ModuleContext, now = new Date()): Promise<number> {
  const due = await ctx.db.select<{ id: string }>("SELECT id FROM blog_posts WHERE status = 'scheduled' AND scheduled_at <= ? AND deleted_at IS NULL", [now]);
  if (!due.length) return 0;
  await ctx.db.exec(
    `UPDATE blog_posts SET status = 'published', published_at = scheduled_at, scheduled_at = NULL, updated_at = ?
     WHERE status = 'scheduled' AND scheduled_at <= ? AND deleted_at IS NULL AND id IN (${due.map(() => '?').join(', ')})`,
    [now, now, ...due.map((d) => d.id)],
  );
  forgetTotals(ctx);
  return due.length;
}
