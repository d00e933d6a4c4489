import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { assertCanRead, canManage, isAdmin, type PostAccessRow } from './access.js';
import { badRequest, forbidden, ipNetworkKey, notFound, type ModuleContext, type UserRecord } from '../../src/module-api.js';
import { withAuthors } from './authors.js';
import { isUniqueViolation } from '../../src/module-api.js';
import { keyedDigest } from './caller.js';
import { iso, loadPost, type Row } from './posts-read.js';
import type { BlogSettings } from './settings.js';
import { assertEngagement } from './types.js';

/** A post that the caller may read and that takes part in discussion (published, not deleted). */
export async function livePost(ctx: ModuleContext, viewer: UserRecord | null, postId: string, password?: string): Promise<Row> {
  const row = await loadPost(ctx, postId);
  await assertCanRead(ctx, viewer, row as PostAccessRow, password);
  return row;
}

const assertOpen = (row: Row) => {
  if (row.deleted_at || row.status !== 'published') throw badRequest('This post is not published', undefined, 'POST_NOT_PUBLISHED');
};

// Comments

export const commentCreate = z
  .strictObject({
    comment_body: z.string().trim().min(1, 'must not be empty').max(10_000).optional(),
    body: z.string().trim().min(1, 'must not be empty').max(10_000).optional(),
    content: z.string().trim().min(1, 'must not be empty').max(10_000).optional(),
    parent_id: z.string().trim().min(1).max(36).nullable().optional(),
    post_password: z.string().max(200).optional(),
  })
  .refine((b) => b.comment_body ?? b.body ?? b.content, { message: 'comment_body: required', path: ['comment_body'] });
export const commentUpdate = z
  .strictObject({
    comment_body: z.string().trim().min(1, 'must not be empty').max(10_000).optional(),
    body: z.string().trim().min(1, 'must not be empty').max(10_000).optional(),
  })
  .refine((b) => b.comment_body ?? b.body, { message: 'comment_body: required', path: ['comment_body'] });
export const MODERATION = ['approve', 'reject', 'spam'] as const;
const STATUS_OF = { approve: 'approved', reject: 'rejected', spam: 'spam', approved: 'approved', rejected: 'rejected' } as const;
export const moderateSchema = z
  .strictObject({
    action: z.enum([...MODERATION, 'approved', 'rejected']).optional(),
    status: z.enum([...MODERATION, 'approved', 'rejected']).optional(),
    reason: z.string().trim().max(500).optional(),
  })
  .refine((b) => b.action ?? b.status, { message: 'action: one of approve, reject, spam is required', path: ['action'] });

const toComment = (r: Row, viewer: UserRecord | null, moderator: boolean) => ({
  id: r.id,
  post_id: r.post_id,
  parent_id: r.parent_id ?? null,
  comment_body: r.deleted_at ? null : r.body,
  body: r.deleted_at ? null : r.body,
  status: r.deleted_at ? 'deleted' : r.status,
  user_id: r.user_id,
  author: {
    id: r.user_id,
    name: r.author_name ?? null,
    user_name: r.author_user_name ?? null,
    display_name: r.author_display_name ?? null,
    picture: r.author_picture ?? null,
  },
  ...(moderator ? { moderation_reason: r.moderation_reason ?? null, moderated_at: iso(r.moderated_at) } : {}),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  can: {
    edit: Boolean(viewer && viewer.id === r.user_id && !r.deleted_at),
    delete: Boolean(viewer && (viewer.id === r.user_id || moderator) && !r.deleted_at),
    moderate: moderator,
  },
});

/** Comment authors are added through the user service (withAuthors), never joined. */
const COMMENT_COLUMNS = 'c.*';

export const commentQuery = z.object({
  status: z.enum(['approved', 'pending', 'rejected', 'spam', 'all']).optional(),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/**
 * Approved comments for anyone who may read the post, plus the caller's own waiting ones; the
 * post's author and admins may list any status.
 */
export async function listComments(ctx: ModuleContext, viewer: UserRecord | null, post: Row, q: z.output<typeof commentQuery>) {
  const moderator = canManage(viewer, post as PostAccessRow);
  const status = q.status ?? 'approved';
  if (status !== 'approved' && !moderator) throw forbidden('Only the post author or an admin may list comments by status');
  const where = ['c.post_id = ?'];
  const params: unknown[] = [post.id];
  if (status !== 'all') {
    if (status === 'approved' && viewer && !moderator) {
      where.push("(c.status = 'approved' OR (c.user_id = ? AND c.status = 'pending'))");
      params.push(viewer.id);
    } else {
      where.push('c.status = ?');
      params.push(status);
    }
  }
  const w = where.join(' AND ');
  const offset = (q.page - 1) * q.limit;
  const [rows, [c]] = await Promise.all([
    ctx.db
      .select<Row>(`SELECT ${COMMENT_COLUMNS} FROM blog_comments c WHERE ${w} ORDER BY c.created_at, c.id LIMIT ${q.limit} OFFSET ${offset}`, params)
      .then((r) => withAuthors(ctx, r, 'user_id')),
    ctx.db.select<{ n: number | string }>(`SELECT COUNT(*) AS n FROM blog_comments c WHERE ${w}`, params),
  ]);
  const total = Number(c?.n ?? 0);
  return {
    comments: rows.map((r) => toComment(r, viewer, moderator)),
    meta: { page: q.page, limit: q.limit, total, pages: Math.ceil(total / q.limit), hasMore: offset + rows.length < total },
  };
}

export const queueQuery = z.object({
  status: z.enum(['pending', 'approved', 'rejected', 'spam']).default('pending'),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional(),
});

/** `created_at|id` of the last comment of a page, as an opaque cursor. */
const queueCursor = (r: Row) => Buffer.from(`${iso(r.created_at)}|${String(r.id)}`).toString('base64url');

function readQueueCursor(raw: string): { at: Date; id: string } {
  const [at, id, extra] = Buffer.from(raw, 'base64url').toString('utf8').split('|');
  const when = new Date(at ?? '');
  if (extra !== undefined || !id || id.length > 64 || Number.isNaN(when.getTime())) {
    throw badRequest('cursor: not a cursor of this list', [{ field: 'cursor', message: 'not a cursor of this list' }]);
  }
  return { at: when, id };
}

/**
 * The moderation queue (admins): comments of one status (pending by default) across every post that is
 * not deleted, oldest first, keyset paged on `(created_at, id)` — the `blog_comments_queue` index, so a
 * page costs the same however long the queue. Each comment carries its post's id, title and slug.
 */
export async function commentQueue(ctx: ModuleContext, viewer: UserRecord, q: z.output<typeof queueQuery>) {
  if (!isAdmin(viewer)) throw forbidden('Only an admin may list comments across posts');
  const where = ['c.status = ?', 'c.deleted_at IS NULL', 'p.deleted_at IS NULL'];
  const params: unknown[] = [q.status];
  if (q.cursor) {
    const after = readQueueCursor(q.cursor);
    where.push('(c.created_at > ? OR (c.created_at = ? AND c.id > ?))');
    params.push(after.at, after.at, after.id);
  }
  const rows = await ctx.db.select<Row>(
    `SELECT ${COMMENT_COLUMNS}, p.title AS post_title, p.slug AS post_slug FROM blog_comments c JOIN blog_posts p ON p.id = c.post_id WHERE ${where.join(' AND ')} ORDER BY c.created_at, c.id LIMIT ${q.limit + 1}`,
    params,
  );
  const more = rows.length > q.limit;
  const page = await withAuthors(ctx, rows.slice(0, q.limit), 'user_id');
  const next = more ? queueCursor(page[page.length - 1]) : null;
  return {
    comments: page.map((r) => ({ ...toComment(r, viewer, true), post: { id: r.post_id, title: r.post_title ?? null, slug: r.post_slug ?? null } })),
    meta: { status: q.status, limit: q.limit, hasMore: more, next_cursor: next },
  };
}

async function loadComment(ctx: ModuleContext, id: string): Promise<Row> {
  const [row] = await withAuthors(ctx, await ctx.db.select<Row>(`SELECT ${COMMENT_COLUMNS} FROM blog_comments c WHERE c.id = ?`, [id]), 'user_id');
  if (!row) throw notFound('Comment not found');
  return row;
}

export async function addComment(ctx: ModuleContext, user: UserRecord, post: Row, input: z.output<typeof commentCreate>) {
  assertOpen(post);
  await assertEngagement(ctx, post, 'comments');
  const cfg = ctx.config<BlogSettings>();
  if (!cfg.comments_enabled) throw forbidden('Comments are closed', 'COMMENTS_CLOSED');
  if (input.parent_id) {
    const [parent] = await ctx.db.select<Row>('SELECT post_id, deleted_at FROM blog_comments WHERE id = ?', [input.parent_id]);
    if (!parent || parent.post_id !== post.id || parent.deleted_at) {
      throw badRequest('parent_id: no such comment on this post', [{ field: 'parent_id', message: 'no such comment on this post' }]);
    }
  }
  const id = randomUUID();
  const now = new Date();
  // The post's author and admins are trusted with their own threads.
  const status = cfg.comments_require_approval && !canManage(user, post as PostAccessRow) ? 'pending' : 'approved';
  await ctx.db.exec('INSERT INTO blog_comments (id, post_id, user_id, parent_id, body, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
    id,
    post.id,
    user.id,
    input.parent_id ?? null,
    input.comment_body ?? input.body ?? input.content,
    status,
    now,
    now,
  ]);
  return toComment(await loadComment(ctx, id), user, canManage(user, post as PostAccessRow));
}

export async function editComment(ctx: ModuleContext, user: UserRecord, commentId: string, input: z.output<typeof commentUpdate>) {
  const c = await loadComment(ctx, commentId);
  if (c.deleted_at) throw notFound('Comment not found');
  if (c.user_id !== user.id) throw forbidden('Only the author of a comment may edit it');
  // Only while it is not deleted: an edit racing a deletion must not bring the text back.
  const edited = await ctx.db.select('UPDATE blog_comments SET body = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL RETURNING id', [
    input.comment_body ?? input.body,
    new Date(),
    commentId,
  ]);
  if (!edited.length) throw notFound('Comment not found');
  return toComment(await loadComment(ctx, commentId), user, false);
}

/** The author of a comment, the post's author and admins may delete it; replies stay (the text goes). */
export async function deleteComment(ctx: ModuleContext, user: UserRecord, commentId: string) {
  const c = await loadComment(ctx, commentId);
  if (c.deleted_at) throw notFound('Comment not found');
  const post = await loadPost(ctx, c.post_id);
  if (c.user_id !== user.id && !canManage(user, post as PostAccessRow)) throw forbidden('Only the author, the post author or an admin may delete this comment');
  const now = new Date();
  await ctx.db.exec("UPDATE blog_comments SET deleted_at = ?, body = '', updated_at = ? WHERE id = ?", [now, now, commentId]);
  return { id: commentId, deleted: true };
}

export async function moderateComment(ctx: ModuleContext, user: UserRecord, commentId: string, input: z.output<typeof moderateSchema>) {
  const c = await loadComment(ctx, commentId);
  if (c.deleted_at) throw notFound('Comment not found');
  const post = await loadPost(ctx, c.post_id);
  if (!canManage(user, post as PostAccessRow)) throw forbidden('Only the post author or an admin may moderate comments');
  // Non-null: the body schema requires 'action' or 'status'.
  const status = STATUS_OF[(input.action ?? input.status)!];
  const now = new Date();
  const moderated = await ctx.db.select(
    'UPDATE blog_comments SET status = ?, moderation_reason = ?, moderated_by = ?, moderated_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL RETURNING id',
    [status, input.reason ?? null, user.id, now, now, commentId],
  );
  if (!moderated.length) throw notFound('Comment not found');
  return { id: commentId, status, reason: input.reason ?? null, moderated_at: now.toISOString() };
}

// Reactions

export const reactionSchema = z.strictObject({
  reaction_type: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z][a-z0-9_]{0,31}$/, 'must be a reaction name such as like'),
});

export async function reactionSummary(ctx: ModuleContext, viewer: UserRecord | null, postId: string) {
  const rows = await ctx.db.select<{ reaction_type: string; n: number | string }>(
    'SELECT reaction_type, COUNT(*) AS n FROM blog_reactions WHERE post_id = ? GROUP BY reaction_type ORDER BY reaction_type',
    [postId],
  );
  const mine = viewer
    ? await ctx.db.select<{ reaction_type: string }>('SELECT reaction_type FROM blog_reactions WHERE post_id = ? AND user_id = ? ORDER BY reaction_type', [
        postId,
        viewer.id,
      ])
    : [];
  const counts = Object.fromEntries(rows.map((r) => [r.reaction_type, Number(r.n)]));
  return { post_id: postId, counts, total: rows.reduce((s, r) => s + Number(r.n), 0), mine: mine.map((m) => m.reaction_type) };
}

/** One reaction per user and type; sending it again takes it back. */
export async function toggleReaction(ctx: ModuleContext, user: UserRecord, post: Row, type: string) {
  assertOpen(post);
  await assertEngagement(ctx, post, 'reactions');
  const allowed = ctx.config<BlogSettings>().reaction_types;
  if (!allowed.includes(type))
    throw badRequest(`reaction_type: must be one of ${allowed.join(', ')}`, [{ field: 'reaction_type', message: `must be one of ${allowed.join(', ')}` }]);
  const removed = await ctx.db.select('DELETE FROM blog_reactions WHERE post_id = ? AND user_id = ? AND reaction_type = ? RETURNING id', [
    post.id,
    user.id,
    type,
  ]);
  let active = removed.length === 0;
  if (active) {
    try {
      await ctx.db.exec('INSERT INTO blog_reactions (id, post_id, user_id, reaction_type, created_at) VALUES (?, ?, ?, ?, ?)', [
        randomUUID(),
        post.id,
        user.id,
        type,
        new Date(),
      ]);
    } catch (err) {
      // The same reaction sent twice at once: it is there, as the caller wanted.
      if (!isUniqueViolation(err)) throw err;
      active = true;
    }
  }
  return { reaction_type: type, active, reacted: active, ...(await reactionSummary(ctx, user, post.id)) };
}

// Bookmarks

export async function addBookmark(ctx: ModuleContext, user: UserRecord, post: Row) {
  await assertEngagement(ctx, post, 'bookmarks');
  try {
    await ctx.db.exec('INSERT INTO blog_bookmarks (id, post_id, user_id, created_at) VALUES (?, ?, ?, ?)', [randomUUID(), post.id, user.id, new Date()]);
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  return { post_id: post.id, bookmarked: true };
}

export async function removeBookmark(ctx: ModuleContext, user: UserRecord, postId: string) {
  await loadPost(ctx, postId);
  await ctx.db.exec('DELETE FROM blog_bookmarks WHERE post_id = ? AND user_id = ?', [postId, user.id]);
  return { post_id: postId, bookmarked: false };
}

// Views and stats

/** The UTC day a view is counted on (`YYYY-MM-DD`). */
export const viewDay = (at: Date) => at.toISOString().slice(0, 10);

/**
 * Counts at most one view per post, client network (IPv4 /24, IPv6 /48; an IPv4-mapped IPv6 address
 * as its IPv4) and UTC day, whoever calls and whatever its User-Agent: rotating the agent, or the
 * address within one network, counts nothing more. The network is stored only as a keyed digest. The
 * day's row is claimed by a unique insert, so concurrent calls count once; the post's counter moves
 * in the same transaction.
 */
export async function recordView(ctx: ModuleContext, post: Row, clientAddress: string, now = new Date()) {
  assertOpen(post);
  await assertEngagement(ctx, post, 'views');
  const key = keyedDigest(ctx, `net:${ipNetworkKey(clientAddress)}`);
  const day = viewDay(now);
  const counted = await ctx.db.transaction(async (t) => {
    // ON CONFLICT keeps a PostgreSQL transaction usable; the row's id says whether this call made it.
    const id = randomUUID();
    await ctx.db.exec(
      'INSERT INTO blog_views (id, post_id, viewer_key, view_day, user_id, views, counted_at, created_at) VALUES (?, ?, ?, ?, NULL, 1, ?, ?) ON CONFLICT (post_id, viewer_key, view_day) DO NOTHING',
      [id, post.id, key, day, now, now],
      { tx: t },
    );
    const [row] = await ctx.db.select<{ id: string }>('SELECT id FROM blog_views WHERE post_id = ? AND viewer_key = ? AND view_day = ?', [post.id, key, day], {
      tx: t,
    });
    const fresh = row?.id === id;
    if (fresh) await ctx.db.exec('UPDATE blog_posts SET view_count = view_count + 1 WHERE id = ?', [post.id], { tx: t });
    return fresh;
  });
  const [r] = await ctx.db.select<{ view_count: number | string }>('SELECT view_count FROM blog_posts WHERE id = ?', [post.id]);
  return { post_id: post.id, counted, views: Number(r?.view_count ?? 0) };
}

export async function postStats(ctx: ModuleContext, viewer: UserRecord | null, post: Row) {
  const moderator = canManage(viewer, post as PostAccessRow);
  const [[v], reactions, [c], [b]] = await Promise.all([
    ctx.db.select<Row>(
      'SELECT p.view_count AS views, (SELECT COUNT(DISTINCT bv.viewer_key) FROM blog_views bv WHERE bv.post_id = p.id) AS unique_viewers FROM blog_posts p WHERE p.id = ?',
      [post.id],
    ),
    ctx.db.select<Row>('SELECT reaction_type, COUNT(*) AS n FROM blog_reactions WHERE post_id = ? GROUP BY reaction_type', [post.id]),
    ctx.db.select<Row>(
      `SELECT COUNT(*) AS n${moderator ? ", SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending" : ''} FROM blog_comments WHERE post_id = ? AND deleted_at IS NULL AND ${moderator ? "status IN ('approved', 'pending')" : "status = 'approved'"}`,
      [post.id],
    ),
    ctx.db.select<Row>('SELECT COUNT(*) AS n FROM blog_bookmarks WHERE post_id = ?', [post.id]),
  ]);
  const byType: Record<string, number> = Object.fromEntries(reactions.map((r) => [r.reaction_type, Number(r.n)]));
  return {
    post_id: post.id,
    views: Number(v?.views ?? 0),
    unique_viewers: Number(v?.unique_viewers ?? 0),
    reactions: byType,
    reactions_total: Object.values(byType).reduce((s, n) => s + n, 0),
    comments: Number(c?.n ?? 0),
    ...(moderator ? { comments_pending: Number(c?.pending ?? 0) } : {}),
    bookmarks: Number(b?.n ?? 0),
  };
}
