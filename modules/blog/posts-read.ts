import { z } from 'zod';
import { assertCanRead, isAdmin, postAbilities, visibleWhere, type PostAccessRow } from './access.js';
import { cachedTotal } from './totals.js';
import { postTypeKey, postTypes, publicPath, ruleIn, type PostTypeRules } from './types.js';
import { badRequest, notFound, type ModuleContext, type UserRecord } from '../../src/module-api.js';
import { withAuthors } from './authors.js';

/** A row of the blog's own SQL: the statement names its columns, so they are read without a cast per column. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- columns of a raw SQL row, named by the statement
export type Row = Record<string, any>;

const LIST_COLUMNS = `p.id, p.slug, p.title, p.excerpt, p.body_format, p.status, p.visibility, p.password_hash, p.lang, p.metadata,
  p.author_id, p.featured_image_id, p.view_count, p.published_at, p.scheduled_at, p.created_at, p.updated_at, p.deleted_at,
  p.post_type, p.fields, p.meta_title, p.meta_description, p.canonical_url, p.og_image`;
const FULL_COLUMNS = `${LIST_COLUMNS}, p.body, p.body_html`;
/** Authors are added to the rows through the user service (withAuthors), never joined. */
export const POST_FROM = 'blog_posts p';

export const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());
/** A JSON column as an object (SQLite answers text, PostgreSQL parsed JSON). */
export const json = (v: unknown): Record<string, unknown> => {
  if (typeof v === 'string') {
    try {
      return JSON.parse(v) ?? {};
    } catch {
      return {};
    }
  }
  return (v as Record<string, unknown>) ?? {};
};

export const imageUrl = (ctx: ModuleContext, id: string | null) => (id ? `${ctx.site.publicBaseUrl}/api/v1/posts/images/${id}` : null);

/** What posts on the wire need beside their rows: their categories and tags, and the post types (paths). */
export interface Terms {
  categories: Map<string, Row[]>;
  tags: Map<string, Row[]>;
  types: Map<string, PostTypeRules>;
}

/** Categories and tags of some posts, in two queries, and the post types. */
export async function termsOf(ctx: ModuleContext, ids: string[]): Promise<Terms> {
  const out: Terms = { categories: new Map(), tags: new Map(), types: ids.length ? await postTypes(ctx) : new Map() };
  if (!ids.length) return out;
  const marks = ids.map(() => '?').join(', ');
  const [cats, tags] = await Promise.all([
    ctx.db.select(
      `SELECT pc.post_id, c.id, c.slug, c.name FROM blog_post_categories pc JOIN blog_categories c ON c.id = pc.category_id WHERE pc.post_id IN (${marks}) ORDER BY c.name`,
      ids,
    ),
    ctx.db.select(
      `SELECT pt.post_id, t.id, t.slug, t.name FROM blog_post_tags pt JOIN blog_tags t ON t.id = pt.tag_id WHERE pt.post_id IN (${marks}) ORDER BY t.name`,
      ids,
    ),
  ]);
  for (const [list, map] of [
    [cats, out.categories],
    [tags, out.tags],
  ] as const) {
    for (const { post_id, ...term } of list as Row[]) map.set(post_id, [...(map.get(post_id) ?? []), term]);
  }
  return out;
}

/** A post on the wire. Body and rendered HTML only where `full`; the password hash never. */
export function toPost(ctx: ModuleContext, r: Row, terms: Terms, viewer: UserRecord | null, full: boolean) {
  const image = imageUrl(ctx, r.featured_image_id ?? null);
  return {
    id: r.id,
    slug: r.slug,
    title: r.title,
    ...(full ? { body: r.body, body_html: r.body_html, rendered_html: r.body_html } : {}),
    body_format: r.body_format,
    excerpt: r.excerpt ?? null,
    status: r.status,
    visibility: r.visibility,
    password_protected: r.visibility === 'password',
    lang: r.lang,
    post_type: ruleIn(terms.types, r.post_type).type_key,
    fields: json(r.fields),
    path: publicPath(ruleIn(terms.types, r.post_type), r.slug),
    meta_title: r.meta_title ?? null,
    meta_description: r.meta_description ?? null,
    canonical_url: r.canonical_url ?? null,
    og_image: r.og_image ?? null,
    metadata: json(r.metadata),
    author_id: r.author_id,
    author: {
      id: r.author_id,
      name: r.author_name ?? null,
      last_name: r.author_last_name ?? null,
      user_name: r.author_user_name ?? null,
      display_name: r.author_display_name ?? null,
      picture: r.author_picture ?? null,
    },
    featured_image: image,
    featured_image_url: image,
    categories: terms.categories.get(r.id) ?? [],
    tags: terms.tags.get(r.id) ?? [],
    view_count: Number(r.view_count ?? 0),
    published_at: iso(r.published_at),
    scheduled_at: iso(r.scheduled_at),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    ...(r.deleted_at || isAdmin(viewer) ? { deleted_at: iso(r.deleted_at) } : {}),
    ...(r.translated_from ? { translated_from: r.translated_from } : {}),
  };
}

export const langSchema = z
  .string()
  .trim()
  .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'must be a language code such as en or pt-BR');
const statusFilter = z.enum(['draft', 'scheduled', 'pending', 'published', 'archived', 'deleted', 'all']);
const intParam = (def: number, max: number) =>
  z
    .union([z.string(), z.number()])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return def;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number from 1 to ${max}` });
        return z.NEVER;
      }
      return n;
    });

export const listQuery = z.object({
  page: intParam(1, 100_000),
  limit: intParam(20, 100),
  status: statusFilter.optional(),
  category: z.string().trim().min(1).max(120).optional(),
  tag: z.string().trim().min(1).max(120).optional(),
  author: z.string().trim().min(1).max(36).optional(),
  author_id: z.string().trim().min(1).max(36).optional(),
  lang: langSchema.optional(),
  q: z.string().trim().min(1, 'must not be empty').max(200).optional(),
  search: z.string().trim().min(1).max(200).optional(),
  mine: z.enum(['true', 'false']).optional(),
  post_type: postTypeKey.optional(),
});
export type ListQuery = z.output<typeof listQuery>;

/** Words as an FTS5 query: each quoted (so no user word is read as an operator), all required. */
function ftsQuery(q: string): string {
  const words = q.match(/[\p{L}\p{N}_]+/gu) ?? [];
  if (!words.length) throw badRequest('q: must contain a word', [{ field: 'q', message: 'must contain a word' }]);
  return words
    .slice(0, 16)
    .map((w) => `"${w}"`)
    .join(' ');
}

/**
 * A page of posts the caller may see, with the filters of the list route. Without a status filter
 * the list is the published posts; other states are the caller's own (or, for admins, everyone's).
 */
export async function listPosts(ctx: ModuleContext, viewer: UserRecord | null, q: ListQuery) {
  const vis = visibleWhere(viewer);
  const where = [vis.sql];
  const params: unknown[] = [...vis.params];
  const status = q.status ?? 'published';
  if (status === 'deleted') {
    if (!isAdmin(viewer)) throw badRequest('status=deleted is for admins', [{ field: 'status', message: 'admins only' }]);
    where[0] = 'p.deleted_at IS NOT NULL';
    params.length = 0;
  } else if (status !== 'all') {
    where.push('p.status = ?');
    params.push(status);
  }
  if (status !== 'published' && !isAdmin(viewer)) {
    if (!viewer) throw badRequest(`status=${status} lists your own posts: sign in`, [{ field: 'status', message: 'needs a session' }]);
    where.push('p.author_id = ?');
    params.push(viewer.id);
  }
  if (q.mine === 'true') {
    if (!viewer) throw badRequest('mine=true needs a session', [{ field: 'mine', message: 'needs a session' }]);
    where.push('p.author_id = ?');
    params.push(viewer.id);
  }
  if (q.post_type) {
    where.push('p.post_type = ?');
    params.push(q.post_type);
  }
  const author = q.author_id ?? q.author;
  if (author) {
    where.push('p.author_id = ?');
    params.push(author);
  }
  if (q.category) {
    where.push(
      'EXISTS (SELECT 1 FROM blog_post_categories pc JOIN blog_categories c ON c.id = pc.category_id WHERE pc.post_id = p.id AND (c.slug = ? OR c.id = ?))',
    );
    params.push(q.category, q.category);
  }
  if (q.tag) {
    where.push('EXISTS (SELECT 1 FROM blog_post_tags pt JOIN blog_tags t ON t.id = pt.tag_id WHERE pt.post_id = p.id AND (t.slug = ? OR t.id = ?))');
    params.push(q.tag, q.tag);
  }
  if (q.lang) {
    where.push('(p.lang = ? OR EXISTS (SELECT 1 FROM blog_translations tr WHERE tr.post_id = p.id AND tr.lang = ?))');
    params.push(q.lang, q.lang);
  }
  const text = q.q ?? q.search;
  // Counted without the users join: every post has its author (foreign key).
  let from = 'blog_posts p';
  // Published posts always carry published_at: their order follows the listing index.
  let order = status === 'published' ? 'p.published_at DESC, p.id DESC' : 'COALESCE(p.published_at, p.created_at) DESC, p.id DESC';
  const orderParams: unknown[] = [];
  if (text) {
    const fts = ftsQuery(text);
    if (ctx.db.dialect === 'postgres') {
      where.push("p.search_vector @@ websearch_to_tsquery('simple', ?)");
      params.push(text);
      order = `ts_rank(p.search_vector, websearch_to_tsquery('simple', ?)) DESC, ${order}`;
      orderParams.push(text);
    } else {
      from =
        'blog_posts p JOIN (SELECT post_id, bm25(blog_posts_fts, 0, 10.0, 5.0, 1.0) AS rank FROM blog_posts_fts WHERE blog_posts_fts MATCH ?) s ON s.post_id = p.id';
      params.unshift(fts);
      order = `s.rank, ${order}`;
    }
  }
  const whereSql = where.join(' AND ');
  const offset = (q.page - 1) * q.limit;
  const count = async () => Number((await ctx.db.select<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${from} WHERE ${whereSql}`, params))[0]?.n ?? 0);
  // The page as ids first (ranked, counted in the same pass when searching), then the rows of those
  // 20 only: the ranking never carries wide columns, whose out-of-line values would be read per match.
  const page = async (withTotal: boolean) => {
    const hits = await ctx.db.select<{ id: string; total_count?: number | string }>(
      `SELECT p.id${withTotal ? ', COUNT(*) OVER () AS total_count' : ''} FROM ${from} WHERE ${whereSql} ORDER BY ${order} LIMIT ${q.limit} OFFSET ${offset}`,
      [...params, ...orderParams],
    );
    return {
      hits,
      rows: await rowsByIds(
        ctx,
        hits.map((h) => h.id),
      ),
    };
  };
  let rows: Row[];
  let total: number;
  if (text) {
    const found = await page(true);
    rows = found.rows;
    total = found.hits.length ? Number(found.hits[0].total_count) : offset ? await count() : 0;
  } else {
    [{ rows }, total] = await Promise.all([page(false), cachedTotal(ctx, `${whereSql}|${JSON.stringify(params)}`, count)]);
  }
  const translated = q.lang ? await applyTranslations(ctx, rows, q.lang, false) : rows;
  const terms = await termsOf(
    ctx,
    rows.map((r) => r.id),
  );
  return {
    posts: translated.map((r) => toPost(ctx, r, terms, viewer, false)),
    meta: { page: q.page, limit: q.limit, total, pages: Math.ceil(total / q.limit), hasMore: offset + rows.length < total },
  };
}

/** List rows of these posts, in the order given. */
async function rowsByIds(ctx: ModuleContext, ids: string[]): Promise<Row[]> {
  if (!ids.length) return [];
  const found = await withAuthors(
    ctx,
    await ctx.db.select<Row>(`SELECT ${LIST_COLUMNS} FROM ${POST_FROM} WHERE p.id IN (${ids.map(() => '?').join(', ')})`, ids),
    'author_id',
  );
  const byId = new Map(found.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((r): r is Row => Boolean(r));
}

/** Swaps in the translation in `lang` where one exists (the post keeps its id and slug). */
export async function applyTranslations(ctx: ModuleContext, rows: Row[], lang: string, full: boolean): Promise<Row[]> {
  const need = rows.filter((r) => r.lang !== lang);
  if (!need.length) return rows;
  const trs = await ctx.db.select<Row>(
    `SELECT post_id, title, excerpt${full ? ', body, body_html' : ''} FROM blog_translations WHERE lang = ? AND post_id IN (${need.map(() => '?').join(', ')})`,
    [lang, ...need.map((r) => r.id)],
  );
  const byPost = new Map(trs.map((t) => [t.post_id, t]));
  return rows.map((r) => {
    const t = byPost.get(r.id);
    if (!t) return r;
    return { ...r, title: t.title, excerpt: t.excerpt, ...(full ? { body: t.body, body_html: t.body_html } : {}), translated_from: r.lang, lang };
  });
}

/** The row behind an id (deleted ones included), or null. */
export async function findPostRow(ctx: ModuleContext, id: string): Promise<Row | null> {
  const rows = await withAuthors(ctx, await ctx.db.select<Row>(`SELECT ${FULL_COLUMNS} FROM ${POST_FROM} WHERE p.id = ?`, [id]), 'author_id');
  return rows[0] ?? null;
}

export async function loadPost(ctx: ModuleContext, id: string): Promise<Row> {
  const row = await findPostRow(ctx, id);
  if (!row) throw notFound('Post not found');
  return row;
}

/** A post the caller may read, by id, as the wire shows it; `lang` picks a translation. */
export async function readPost(ctx: ModuleContext, viewer: UserRecord | null, row: Row, opts: { password?: string; lang?: string }) {
  await assertCanRead(ctx, viewer, row as PostAccessRow, opts.password);
  const [shown] = opts.lang ? await applyTranslations(ctx, [row], opts.lang, true) : [row];
  const [terms, langs] = await Promise.all([
    termsOf(ctx, [row.id]),
    ctx.db.select<{ lang: string }>('SELECT lang FROM blog_translations WHERE post_id = ? ORDER BY lang', [row.id]),
  ]);
  return {
    post: { ...toPost(ctx, shown, terms, viewer, true), available_langs: [row.lang, ...langs.map((l) => l.lang).filter((l) => l !== row.lang)] },
    can: postAbilities(viewer, row as PostAccessRow, ruleIn(terms.types, row.post_type).behaviors),
  };
}

/**
 * The post behind a slug: in `lang` when given (else the earliest), or one that answered to that slug
 * before it was renamed (then `redirect_to` names the current slug).
 */
export async function findBySlug(ctx: ModuleContext, slug: string, lang?: string): Promise<{ row: Row; redirectTo: string | null } | null> {
  const current = await withAuthors(
    ctx,
    await ctx.db.select<Row>(
      `SELECT ${FULL_COLUMNS} FROM ${POST_FROM} WHERE p.slug = ? ORDER BY CASE WHEN p.lang = ? THEN 0 ELSE 1 END, p.created_at LIMIT 1`,
      [slug, lang ?? ''],
    ),
    'author_id',
  );
  if (current[0]) return { row: current[0], redirectTo: null };
  const old = await ctx.db.select<{ post_id: string }>(
    'SELECT post_id FROM blog_post_slugs WHERE slug = ? ORDER BY CASE WHEN lang = ? THEN 0 ELSE 1 END, created_at DESC LIMIT 1',
    [slug, lang ?? ''],
  );
  if (!old[0]) return null;
  const row = await findPostRow(ctx, old[0].post_id);
  return row ? { row, redirectTo: row.slug } : null;
}

/** An author's public profile: only writers and admins, or anyone with a post the caller can see. */
export async function authorProfile(ctx: ModuleContext, viewer: UserRecord | null, authorId: string) {
  const u = await ctx.users.find(authorId);
  if (!u || u.deleted_at || u.disabled_at) throw notFound('Author not found');
  const vis = visibleWhere(viewer);
  const [c] = await ctx.db.select<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM blog_posts p WHERE ${vis.sql} AND p.status = 'published' AND p.author_id = ?`,
    [...vis.params, authorId],
  );
  const posts = Number(c?.n ?? 0);
  if (!posts && !['writer', 'admin', 'superadmin'].includes(u.user_type)) throw notFound('Author not found');
  return {
    id: u.id,
    name: u.name ?? null,
    last_name: u.last_name ?? null,
    user_name: u.user_name ?? null,
    display_name: u.display_name ?? null,
    picture: u.picture ?? null,
    post_count: posts,
    member_since: iso(u.created_at),
  };
}

/** The caller's bookmarks, newest first: posts it may still see in lists. */
export async function listBookmarked(ctx: ModuleContext, viewer: UserRecord, page: number, limit: number) {
  const vis = visibleWhere(viewer);
  const where = `b.user_id = ? AND ${vis.sql}`;
  const params = [viewer.id, ...vis.params];
  const from = 'blog_bookmarks b JOIN blog_posts p ON p.id = b.post_id';
  const offset = (page - 1) * limit;
  const [rows, [c]] = await Promise.all([
    ctx.db
      .select<Row>(
        `SELECT ${LIST_COLUMNS}, b.created_at AS bookmarked_at FROM ${from} WHERE ${where} ORDER BY b.created_at DESC, b.id DESC LIMIT ${limit} OFFSET ${offset}`,
        params,
      )
      .then((r) => withAuthors(ctx, r, 'author_id')),
    ctx.db.select<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${from} WHERE ${where}`, params),
  ]);
  const total = Number(c?.n ?? 0);
  const terms = await termsOf(
    ctx,
    rows.map((r) => r.id),
  );
  return {
    posts: rows.map((r) => ({ ...toPost(ctx, r, terms, viewer, false), bookmarked_at: iso(r.bookmarked_at) })),
    meta: { page, limit, total, pages: Math.ceil(total / limit), hasMore: offset + rows.length < total },
  };
}
