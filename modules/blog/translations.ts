import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { assertCanManage, assertCanRead, type PostAccessRow } from './access.js';
import { badRequest, forbidden, notFound, type ModuleContext, type UserRecord } from '../../src/module-api.js';
import { isUniqueViolation } from '../../src/module-api.js';
import { iso, langSchema, loadPost, type Row } from './posts-read.js';
import { makeExcerpt, renderBody, type BodyFormat } from './render.js';

export const translationSchema = z.strictObject({
  lang: langSchema,
  title: z.string().trim().min(1, 'must not be empty').max(300),
  body: z.string().max(500_000),
  excerpt: z.string().trim().max(1000).nullable().optional(),
});

/**
 * Creates or replaces the translation of a post into `lang` (the spec's POST
 * /api/v1/posts/id/{id}/translations): `created` is false when one existed and was updated.
 */
export async function upsertTranslation(ctx: ModuleContext, user: UserRecord, postId: string, input: z.output<typeof translationSchema>) {
  const post = await loadPost(ctx, postId);
  if (post.deleted_at) throw notFound('Post not found');
  assertCanManage(user, post as PostAccessRow);
  if (input.lang === post.lang)
    throw badRequest(`lang: the post itself is in ${post.lang}; edit the post instead`, [{ field: 'lang', message: 'is the language of the post' }]);
  const format = post.body_format as BodyFormat;
  const html = renderBody(input.body, format);
  const excerpt = input.excerpt ?? makeExcerpt(input.body, format);
  const now = new Date();
  const run = () =>
    ctx.db.transaction(async (t) => {
      const [existing] = await ctx.db.select<{ id: string }>('SELECT id FROM blog_translations WHERE post_id = ? AND lang = ?', [postId, input.lang], {
        tx: t,
      });
      if (existing) {
        await ctx.db.exec(
          'UPDATE blog_translations SET title = ?, body = ?, body_html = ?, excerpt = ?, updated_at = ? WHERE id = ?',
          [input.title, input.body, html, excerpt, now, existing.id],
          { tx: t },
        );
        return { id: existing.id, lang: input.lang, created: false };
      }
      const id = randomUUID();
      await ctx.db.exec(
        'INSERT INTO blog_translations (id, post_id, lang, title, body, body_html, excerpt, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [id, postId, input.lang, input.title, input.body, html, excerpt, now, now],
        { tx: t },
      );
      return { id, lang: input.lang, created: true };
    });
  try {
    return await run();
  } catch (err) {
    // Two first translations into one language at once: the second becomes an update.
    if (isUniqueViolation(err)) return run();
    throw err;
  }
}

export async function listTranslations(ctx: ModuleContext, viewer: UserRecord | null, postId: string, password?: string) {
  const post = await loadPost(ctx, postId);
  await assertCanRead(ctx, viewer, post as PostAccessRow, password);
  const rows = await ctx.db.select<Row>(
    'SELECT id, post_id, lang, title, body, body_html, excerpt, created_at, updated_at FROM blog_translations WHERE post_id = ? ORDER BY lang',
    [postId],
  );
  return rows.map((r) => ({ ...r, rendered_html: r.body_html, created_at: iso(r.created_at), updated_at: iso(r.updated_at) }));
}

export async function deleteTranslation(ctx: ModuleContext, user: UserRecord, postId: string, lang: string) {
  const post = await loadPost(ctx, postId);
  assertCanManage(user, post as PostAccessRow);
  const removed = await ctx.db.select('DELETE FROM blog_translations WHERE post_id = ? AND lang = ? RETURNING id', [postId, lang]);
  if (!removed.length) throw notFound('Translation not found');
  return { post_id: postId, lang, deleted: true };
}

export const requireWriterRole = (u: UserRecord) => {
  if (!['writer', 'admin', 'superadmin'].includes(u.user_type)) throw forbidden('Writer role required');
};
