import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { isAdmin, isWriter } from './access.js';
import {
  AppError,
  badRequest,
  exec,
  forbidden,
  inTransaction,
  isUniqueViolation,
  notFound,
  select,
  type ModuleContext,
  type Transaction,
  type UserRecord,
} from './core.js';
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
export async function listTerms(app: ModuleContext, kind: TermKind) {
  const [link, col] = LINK[kind];
  const rows = await select<Row>(
    app,
    `SELECT t.*, (SELECT COUNT(*) FROM ${link} l JOIN blog_posts p ON p.id = l.post_id WHERE l.${col} = t.id AND p.status = 'published' AND p.visibility = 'public' AND p.deleted_at IS NULL) AS post_count
     FROM ${TABLE[kind]} t ORDER BY t.name`,
  );
  return rows.map(toTerm);
}

async function getTerm(app: ModuleContext, kind: TermKind, id: string): Promise<Row> {
  const [row] = await select<Row>(app, `SELECT * FROM ${TABLE[kind]} WHERE id = ? OR slug = ?`, [id, id]);
  if (!row) throw notFound(`${NOUN[kind]} not found`);
  return row;
}

/** Writers may add categories and tags; renaming and deleting them is for admins. */
export async function createTerm(app: ModuleContext, user: UserRecord, kind: TermKind, input: z.output<typeof termCreate>) {
  if (!isWriter(user)) throw forbidden('Writer role required');
  const s = input.slug ?? slugFrom(input.name);
  const now = new Date();
  const id = randomUUID();
  try {
    await exec(app, `INSERT INTO ${TABLE[kind]} (id, slug, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`, [
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
  return toTerm(await getTerm(app, kind, id));
}

export async function updateTerm(app: ModuleContext, user: UserRecord, kind: TermKind, id: string, input: z.output<typeof termUpdate>) {
  if (!isAdmin(user)) throw forbidden('Admin role required');
  const row = await getTerm(app, kind, id);
  const set: Record<string, unknown> = { ...input, updated_at: new Date() };
  const cols = Object.keys(set);
  try {
    await exec(app, `UPDATE ${TABLE[kind]} SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...cols.map((c) => set[c]), row.id]);
  } catch (err) {
    if (isUniqueViolation(err)) throw slugTaken(kind, input.slug ?? '');
    throw err;
  }
  return toTerm(await getTerm(app, kind, row.id));
}

export async function deleteTerm(app: ModuleContext, user: UserRecord, kind: TermKind, id: string) {
  if (!isAdmin(user)) throw forbidden('Admin role required');
  const row = await getTerm(app, kind, id);
  const [link, col] = LINK[kind];
  await inTransaction(app, async (t) => {
    await exec(app, `DELETE FROM ${link} WHERE ${col} = ?`, [row.id], t);
    await exec(app, `DELETE FROM ${TABLE[kind]} WHERE id = ?`, [row.id], t);
  });
  return { id: row.id, deleted: true };
}

/** Category ids for ids or slugs; every one must exist. */
export async function resolveCategories(app: ModuleContext, refs: string[], t: Transaction): Promise<string[]> {
  const want = [...new Set(refs.map((r) => r.toLowerCase()))];
  if (!want.length) return [];
  const marks = want.map(() => '?').join(', ');
  const rows = await select<Row>(app, `SELECT id, slug FROM blog_categories WHERE id IN (${marks}) OR slug IN (${marks})`, [...want, ...want], t);
  const missing = want.filter((w) => !rows.some((r) => r.id === w || r.slug === w));
  if (missing.length)
    throw badRequest(`categories: unknown category ${missing.join(', ')}`, [{ field: 'categories', message: `unknown: ${missing.join(', ')}` }]);
  return [...new Set(rows.map((r) => r.id as string))];
}

/** Tag ids for ids, slugs or names; tags that do not exist yet are created. */
export async function resolveTags(app: ModuleContext, refs: string[], _user: UserRecord, t: Transaction): Promise<string[]> {
  const ids: string[] = [];
  for (const ref of [...new Set(refs)]) {
    const s = slugFrom(ref);
    const [row] = await select<Row>(app, 'SELECT id FROM blog_tags WHERE id = ? OR slug = ?', [ref, SLUG_RE.test(ref) ? ref : s], t);
    if (row) ids.push(row.id);
    else {
      const id = randomUUID();
      const now = new Date();
      await exec(app, 'INSERT INTO blog_tags (id, slug, name, description, created_at, updated_at) VALUES (?, ?, ?, NULL, ?, ?)', [id, s, ref, now, now], t);
      ids.push(id);
    }
  }
  return [...new Set(ids)];
}
