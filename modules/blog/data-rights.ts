import { AppError, type ModuleContext, type Transaction } from '../../src/module-api.js';
import { iso, type Row } from './posts-read.js';
import type { BlogSettings } from './settings.js';

const dates = (r: Row) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]));

/** The blog's part of a personal-data export: the user's posts (with translations), comments, reactions, bookmarks. */
export async function exportBlog({ ctx, userId }: { ctx: ModuleContext; userId: string }) {
  const posts = await ctx.db.select<Row>(
    `SELECT id, slug, title, body, body_format, excerpt, status, visibility, lang, metadata, post_type, fields, meta_title, meta_description,
       canonical_url, og_image, published_at, scheduled_at, created_at, updated_at, deleted_at
     FROM blog_posts WHERE author_id = ? ORDER BY created_at`,
    [userId],
  );
  const translations = posts.length
    ? await ctx.db.select<Row>(
        `SELECT post_id, lang, title, body, excerpt, created_at, updated_at FROM blog_translations WHERE post_id IN (${posts.map(() => '?').join(', ')})`,
        posts.map((p) => p.id),
      )
    : [];
  const comments = await ctx.db.select<Row>(
    'SELECT id, post_id, parent_id, body, status, created_at, updated_at, deleted_at FROM blog_comments WHERE user_id = ? ORDER BY created_at',
    [userId],
  );
  const reactions = await ctx.db.select<Row>('SELECT post_id, reaction_type, created_at FROM blog_reactions WHERE user_id = ? ORDER BY created_at', [userId]);
  const bookmarks = await ctx.db.select<Row>('SELECT post_id, created_at FROM blog_bookmarks WHERE user_id = ? ORDER BY created_at', [userId]);
  return {
    posts: posts.map((p) => ({ ...dates(p), translations: translations.filter((t) => t.post_id === p.id).map(dates) })),
    comments: comments.map(dates),
    reactions: reactions.map(dates),
    bookmarks: bookmarks.map(dates),
  };
}

/** Where an erased author's posts go, per the settings; null to delete them. */
async function heir(ctx: ModuleContext, userId: string): Promise<string | null> {
  const cfg = ctx.config<BlogSettings>();
  if (cfg.erasure_posts !== 'reassign') return null;
  const ref = cfg.erasure_reassign_to.trim();
  const target = ref.includes('@') ? await ctx.users.findByEmail(ref) : ref ? await ctx.users.find(ref) : null;
  // Refusing is safer than deleting posts the operator meant to keep.
  if (!target || target.id === userId) {
    throw new AppError(503, 'BLOG_ERASURE_MISCONFIGURED', 'Blog setting erasure_reassign_to does not name another existing account; nothing was erased');
  }
  return target.id;
}

/**
 * Erasure: the user's comments, reactions, bookmarks and view records go; their posts are deleted
 * or handed to the configured account (erasure_posts). Runs inside the erasure transaction.
 */
export async function eraseBlog({ ctx, userId, tx: t }: { ctx: ModuleContext; userId: string; tx: Transaction }) {
  const to = await heir(ctx, userId);
  // Replies to the user's comments stay, detached.
  await ctx.db.exec('UPDATE blog_comments SET parent_id = NULL WHERE parent_id IN (SELECT id FROM blog_comments WHERE user_id = ?)', [userId], { tx: t });
  for (const table of ['blog_comments', 'blog_reactions', 'blog_bookmarks', 'blog_views']) {
    await ctx.db.exec(`DELETE FROM ${table} WHERE user_id = ?`, [userId], { tx: t });
  }
  if (to) {
    await ctx.db.exec('UPDATE blog_posts SET author_id = ?, updated_at = ? WHERE author_id = ?', [to, new Date(), userId], { tx: t });
    return;
  }
  const own = '(SELECT id FROM blog_posts WHERE author_id = ?)';
  for (const table of [
    'blog_post_categories',
    'blog_post_tags',
    'blog_comments',
    'blog_reactions',
    'blog_bookmarks',
    'blog_views',
    'blog_translations',
    'blog_images',
    'blog_post_slugs',
  ]) {
    await ctx.db.exec(`DELETE FROM ${table} WHERE post_id IN ${own}`, [userId], { tx: t });
  }
  await ctx.db.exec('DELETE FROM blog_posts WHERE author_id = ?', [userId], { tx: t });
}

export { iso };
