import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { isAdmin, isWriter } from './access.js';
import { AppError, badRequest, forbidden, notFound, type ModuleContext, type Transaction, type UserRecord } from '../../src/module-api.js';
import { isUniqueViolation } from '../../src/module-api.js';
import { iso, type Row } from './posts-read.js';
import { SLUG_RE, slugFrom } from './render.js';

export type TermKind = 'categories' | 'tags';
const TABLE = { categories: 'blog_categories', tags: 'blog_tags' } as const;
const LINK = { categories: ['blog_post_categories', 'category_id'], tags: ['blog_post_tags', 'tag_id'] } as const;
const NOUN = { categories: 'Category', tags: 'Tag' } as const;

const slug = z.string().trim().toLowerCase().min(1).max(120).regex(SLUG_RE, 'must be lower-case letters, digits and single hyphens');
export const termCreate = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(120),
  slug: slug.optional(),
  description: z.string().trim().max(2000).nullable().optional(),
});
export const termUpdate = termCreate.partial().refine((b) => Object.keys(b).length > 0, 'send at least one of name, slug, description');

const toTerm = (r: Row) => ({
  id: r.id,
  slug: r.slug,
  name: r.name,
  description: r.description ?? null,
  post_count: Number(r.post_count ?? 0),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

const slugTaken = (kind: TermKind, s: string) =>
  new AppError(400, 'SLUG_TAKEN', `slug: "${s}" is already used by another ${NOUN[kind].toLowerCase()}`, [{ field: 'slug', message: 'already used' }]);

/** Terms with the number of published public posts in each. */
export async function listTerms(ctx: ModuleContext, kind: TermKind) {
  const [link, col] = LINK[kind];
  const rows = await ctx.db
    .select<Row>(`SELECT t.*, (SELECT COUNT(*) FROM ${link} l JOIN blog_posts p ON p.id = l.post_id WHERE l.${col} = t.id AND p.status = 'published' AND p.visibility = 'public' AND p.deleted_at IS NULL) AS post_count
     FROM ${TABLE[kind]} t ORDER BY t.name`);
  return rows.map(toTerm);
}

async function getTerm(ctx: ModuleContext, kind: TermKind, id: string): Promise<Row> {
  const [row] = await ctx.db.select<Row>(`SELECT * FROM ${TABLE[kind]} WHERE id = ? OR slug = ?`, [id, id]);
  if (!row) throw notFound(`${NOUN[kind]} not found`);
  return row;
}

/** Writers may add categories and tags; renaming and deleting them is for admins. */
export async function createTerm(ctx: ModuleContext, user: UserRecord, kind: TermKind, input: z.output<typeof termCreate>) {
  if (!isWriter(user)) throw forbidden('Writer role required');
  const s = input.slug ?? slugFrom(input.name);
  const now = new Date();
  const id = randomUUID();
  try {
    await ctx.db.exec(`INSERT INTO ${TABLE[kind]} (id, slug, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`, [
      id,
      s,
      input.name,
      input.description ?? null,
      now,
      now,
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw slugTaken(kind, s);
    throw err;
  }
  return toTerm(await getTerm(ctx, kind, id));
}

export async function updateTerm(ctx: ModuleContext, user: UserRecord, kind: TermKind, id: string, input: z.output<typeof termUpdate>) {
  if (!isAdmin(user)) throw forbidden('Admin role required');
  const row = await getTerm(ctx, kind, id);
  const set: Record<string, unknown> = { ...input, updated_at: new Date() };
  const cols = Object.keys(set);
  try {
    await ctx.db.exec(`UPDATE ${TABLE[kind]} SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...cols.map((c) => set[c]), row.id]);
  } catch (err) {
    if (isUniqueViolation(err)) throw slugTaken(kind, input.slug ?? '');
    throw err;
  }
  return toTerm(await getTerm(ctx, kind, row.id));
}

export async function deleteTerm(ctx: ModuleContext, user: UserRecord, kind: TermKind, id: string) {
  if (!isAdmin(user)) throw forbidden('Admin role required');
  const row = await getTerm(ctx, kind, id);
  const [link, col] = LINK[kind];
  await ctx.db.transaction(async (t) => {
    await ctx.db.exec(`DELETE FROM ${link} WHERE ${col} = ?`, [row.id], { tx: t });
    await ctx.db.exec(`DELETE FROM ${TABLE[kind]} WHERE id = ?`, [row.id], { tx: t });
  });
  return { id: row.id, deleted: true };
}

/** Category ids for ids or slugs; every one must exist. */
export async function resolveCategories(ctx: ModuleContext, refs: string[], t: Transaction): Promise<string[]> {
  const want = [...new Set(refs.map((r) => r.toLowerCase()))];
  if (!want.length) return [];
  const marks = want.map(() => '?').join(', ');
  const rows = await ctx.db.select<Row>(`SELECT id, slug FROM blog_categories WHERE id IN (${marks}) OR slug IN (${marks})`, [...want, ...want], { tx: t });
  const missing = want.filter((w) => !rows.some((r) => r.id === w || r.slug === w));
  if (missing.length)
    throw badRequest(`categories: unknown category ${missing.join(', ')}`, [{ field: 'categories', message: `unknown: ${missing.join(', ')}` }]);
  return [...new Set(rows.map((r) => r.id as string))];
}

/** Tag ids for ids, slugs or names; tags that do not exist yet are created. */
export async function resolveTags(ctx: ModuleContext, refs: string[], _user: UserRecord, t: Transaction): Promise<string[]> {
  const ids: string[] = [];
  for (const ref of [...new Set(refs)]) {
    const s = slugFrom(ref);
    const [row] = await ctx.db.select<Row>('SELECT id FROM blog_tags WHERE id = ? OR slug = ?', [ref, SLUG_RE.test(ref) ? ref : s], { tx: t });
    if (row) ids.push(row.id);
    else {
      const id = randomUUID();
      const now = new Date();
      await ctx.db.exec('INSERT INTO blog_tags (id, slug, name, description, created_at, updated_at) VALUES (?, ?, ?, NULL, ?, ?)', [id, s, ref, now, now], {
        tx: t,
      });
      ids.push(id);
    }
  }
  return [...new Set(ids)];
}
