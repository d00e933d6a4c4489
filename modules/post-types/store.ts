import { randomUUID } from 'node:crypto';
import { isUniqueViolation, notFound, type ModuleContext, type Transaction } from '../../src/module-api.js';
import { applyBehaviors, definitionError, type Behaviors, type CreateInput, type Definition, type FieldDef, type UpdateInput } from './definition.js';
import type { PostTypesSettings } from './settings.js';

/** A row of the module's own SQL (COLUMNS names them), read without a cast per column. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- columns of a raw SQL row, named by COLUMNS
type Row = Record<string, any>;
const COLUMNS =
  'id, type_key, type_name, description, slug_prefix, field_schema, behaviors, icon, color, is_active, is_built_in, sort_order, created_at, updated_at';

const parse = <T>(v: unknown, fallback: T): T => {
  if (typeof v !== 'string') return (v as T) ?? fallback;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
};
const bool = (v: unknown) => v === true || v === 1 || v === '1' || v === 't';
const iso = (v: unknown) => new Date(v as string).toISOString();

/** The blog's default behaviours (the blog owns them and enforces them); a definition's own are laid over them. */
async function blogDefaults(ctx: ModuleContext): Promise<Record<string, unknown>> {
  const q: { behaviors: Record<string, unknown> | null } = { behaviors: null };
  await ctx.hooks.run('blog.post_types.defaults', q);
  return q.behaviors ?? {};
}

function toDefinition(r: Row, defaults: Record<string, unknown>): Definition {
  return {
    id: r.id,
    type_key: r.type_key,
    type_name: r.type_name,
    description: r.description ?? '',
    slug_prefix: r.slug_prefix ?? '',
    field_schema: parse<FieldDef[]>(r.field_schema, []),
    behaviors: { ...defaults, ...parse<Record<string, unknown>>(r.behaviors, {}) } as Behaviors,
    icon: r.icon ?? '',
    color: r.color ?? '',
    is_active: bool(r.is_active),
    is_built_in: bool(r.is_built_in),
    sort_order: Number(r.sort_order ?? 0),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

const ORDER = 'ORDER BY sort_order, type_key';

/** Every definition and the revision they belong to (read first: a change committed in between shows as a newer revision next time). */
async function readAll(ctx: ModuleContext): Promise<{ revision: string; defs: Definition[] }> {
  const [rev] = await ctx.db.select<{ revision: string }>('SELECT revision FROM post_types_revision WHERE id = 1');
  const [rows, defaults] = await Promise.all([ctx.db.select<Row>(`SELECT ${COLUMNS} FROM post_types ${ORDER}`), blogDefaults(ctx)]);
  return { revision: rev?.revision ?? '', defs: rows.map((r) => toDefinition(r, defaults)) };
}

/**
 * The cache. Every change rewrites the revision row in its transaction. With Redis, the revision
 * and the definitions are shared there and this process keeps a copy it checks against the shared
 * revision on every read: a change made on one instance is seen by the next request on any other.
 * Copies (shared and local) live at most COPY_TTL_MS, so a change Redis missed while it was down
 * shows within that; a read that finds the database ahead of Redis drops Redis's revision, and the
 * next read puts the database's there. Without Redis, this process's copy is checked against the
 * revision row. POST_TYPES_FRESH_CACHE_MODE reads the database every time.
 */
interface Copy {
  revision: string;
  defs: Definition[];
  /** When it was read from the database. */
  at: number;
}
const locals = new WeakMap<ModuleContext, Copy>();
const COPY_TTL_MS = 30_000;
const REVISION_TTL_SEC = 30 * 24 * 3600;

export type CacheUse = 'off' | 'hit' | 'miss';

export async function definitions(ctx: ModuleContext): Promise<{ defs: Definition[]; cache: CacheUse }> {
  if (ctx.config<PostTypesSettings>().fresh_cache_mode) return { defs: (await readAll(ctx)).defs, cache: 'off' };
  const now = Date.now();
  const young = (c: Copy | null | undefined, revision: string | null): c is Copy => Boolean(c && c.revision === revision && now - c.at < COPY_TTL_MS);
  const local = locals.get(ctx);
  if (ctx.cache.shared) {
    let shared = await ctx.cache.get('revision');
    if (shared) {
      if (young(local, shared)) return { defs: local.defs, cache: 'hit' };
      const copy = parse<Copy | null>(await ctx.cache.get('definitions'), null);
      if (young(copy, shared)) {
        locals.set(ctx, copy);
        return { defs: copy.defs, cache: 'hit' };
      }
    }
    const fresh: Copy = { ...(await readAll(ctx)), at: now };
    if (!shared) {
      // No shared revision yet (or Redis was flushed): this one, unless another instance set one first.
      if (await ctx.cache.add('revision', fresh.revision, REVISION_TTL_SEC)) shared = fresh.revision;
    } else if (shared !== fresh.revision) {
      // The database is ahead of Redis (a change made while Redis was down), or a change is committing now.
      await ctx.cache.del('revision');
    }
    if (shared === fresh.revision) {
      await ctx.cache.set('definitions', JSON.stringify(fresh), Math.ceil(COPY_TTL_MS / 1000));
      locals.set(ctx, fresh);
    }
    return { defs: fresh.defs, cache: 'miss' };
  }
  const [row] = await ctx.db.select<{ revision: string }>('SELECT revision FROM post_types_revision WHERE id = 1');
  if (local && row && local.revision === row.revision) return { defs: local.defs, cache: 'hit' };
  const fresh: Copy = { ...(await readAll(ctx)), at: now };
  locals.set(ctx, fresh);
  return { defs: fresh.defs, cache: 'miss' };
}

/**
 * A change: made in one transaction with a new revision, then announced to the caches. The revision row
 * is written first, so changes take turns on its row lock (PostgreSQL; SQLite transactions write one at a
 * time) and each reads what the one before it committed: two behaviour edits at once both stay.
 */
async function change<T>(ctx: ModuleContext, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  const revision = randomUUID();
  const out = await ctx.db.transaction(async (tx) => {
    await ctx.db.exec('UPDATE post_types_revision SET revision = ?, updated_at = ? WHERE id = 1', [revision, new Date()], { tx });
    return fn(tx);
  });
  locals.delete(ctx);
  if (ctx.cache.shared) {
    await ctx.cache.set('revision', revision, REVISION_TTL_SEC);
    await ctx.cache.del('definitions');
  }
  return out;
}

export async function findDefinition(ctx: ModuleContext, key: string, tx?: Transaction): Promise<Definition | null> {
  const [row] = await ctx.db.select<Row>(`SELECT ${COLUMNS} FROM post_types WHERE type_key = ?`, [key], { tx });
  return row ? toDefinition(row, await blogDefaults(ctx)) : null;
}

export async function getDefinition(ctx: ModuleContext, key: string, tx?: Transaction): Promise<Definition> {
  const d = await findDefinition(ctx, key, tx);
  if (!d) throw notFound(`No post type "${key}"`);
  return d;
}

const taken = (key: string) => definitionError('POST_TYPE_EXISTS', `type_key: "${key}" is already a post type`, 'type_key');

export async function createDefinition(ctx: ModuleContext, input: CreateInput): Promise<Definition> {
  try {
    await change(ctx, async (tx) => {
      if (await findDefinition(ctx, input.type_key, tx)) throw taken(input.type_key);
      const [last] = await ctx.db.select<{ n: number | string | null }>('SELECT MAX(sort_order) AS n FROM post_types', [], { tx });
      const now = new Date();
      await ctx.db.exec(
        `INSERT INTO post_types (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          randomUUID(),
          input.type_key,
          input.type_name,
          input.description ?? '',
          input.slug_prefix ?? '',
          JSON.stringify(input.field_schema ?? []),
          JSON.stringify(applyBehaviors({}, input.behaviors)),
          input.icon ?? '',
          input.color ?? '',
          input.is_active ?? true,
          false,
          input.sort_order ?? (last?.n === null || last?.n === undefined ? 0 : Number(last.n) + 1),
          now,
          now,
        ],
        { tx },
      );
    });
  } catch (err) {
    // Two admins created the same key at once: the unique index refused the second.
    if (isUniqueViolation(err)) throw taken(input.type_key);
    throw err;
  }
  return getDefinition(ctx, input.type_key);
}

export async function updateDefinition(ctx: ModuleContext, key: string, input: UpdateInput): Promise<Definition> {
  if (input.type_key !== undefined && input.type_key !== key) {
    throw definitionError('POST_TYPE_KEY_FIXED', 'type_key: a post type keeps its key (create a new type and move the posts on deleting this one)', 'type_key');
  }
  await change(ctx, async (tx) => {
    const [row] = await ctx.db.select<Row>('SELECT behaviors FROM post_types WHERE type_key = ?', [key], { tx });
    if (!row) throw notFound(`No post type "${key}"`);
    const set: Record<string, unknown> = { updated_at: new Date() };
    for (const k of ['type_name', 'description', 'slug_prefix', 'icon', 'color', 'is_active', 'sort_order'] as const) {
      if (input[k] !== undefined) set[k] = input[k];
    }
    if (input.field_schema !== undefined) set.field_schema = JSON.stringify(input.field_schema);
    if (input.behaviors !== undefined) set.behaviors = JSON.stringify(applyBehaviors(parse<Record<string, unknown>>(row.behaviors, {}), input.behaviors));
    const cols = Object.keys(set);
    await ctx.db.exec(`UPDATE post_types SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE type_key = ?`, [...cols.map((c) => set[c]), key], { tx });
  });
  return getDefinition(ctx, key);
}

/** Posts per type, as the blog counts them (deleted posts included: they can be restored). */
export async function usage(ctx: ModuleContext): Promise<Record<string, number>> {
  const q = { counts: {} as Record<string, number> };
  await ctx.hooks.run('blog.post_types.usage', q);
  return q.counts;
}

/**
 * Deletes a custom type; its posts must move to another type (`moveTo`) or there must be none. Checked
 * inside the change, after the changes before it: of two types deleted at once into each other, one goes.
 */
export async function deleteDefinition(ctx: ModuleContext, key: string, moveTo: string | undefined): Promise<{ moved: number }> {
  return change(ctx, async (tx) => {
    const d = await getDefinition(ctx, key, tx);
    if (d.is_built_in) throw definitionError('POST_TYPE_BUILT_IN', `Post type "${key}" is built in: switch it off (is_active false) instead`);
    if (moveTo === key) throw definitionError('VALIDATION_ERROR', 'move_to: must name another post type', 'move_to');
    if (moveTo && !(await findDefinition(ctx, moveTo, tx))) throw definitionError('VALIDATION_ERROR', `move_to: no post type "${moveTo}"`, 'move_to');
    const inUse = (await usage(ctx))[key] ?? 0;
    if (inUse && !moveTo) {
      throw definitionError(
        'POST_TYPE_IN_USE',
        `Post type "${key}" is used by ${inUse} post${inUse === 1 ? '' : 's'} (deleted ones included): move them with ?move_to=<type_key>`,
      );
    }
    const move = { from: key, to: moveTo ?? '', tx, moved: 0 };
    if (moveTo) await ctx.hooks.run('blog.post_types.move', move);
    await ctx.db.exec('DELETE FROM post_types WHERE type_key = ?', [key], { tx });
    return { moved: move.moved };
  });
}

/** Puts the named types first, in that order; the others keep their order after them. */
export async function reorder(ctx: ModuleContext, order: string[]): Promise<Definition[]> {
  await change(ctx, async (tx) => {
    const rows = await ctx.db.select<{ type_key: string }>(`SELECT type_key FROM post_types ${ORDER}`, [], { tx });
    const known = new Set(rows.map((r) => r.type_key));
    const unknown = order.filter((k) => !known.has(k));
    if (unknown.length) throw definitionError('VALIDATION_ERROR', `order: no post type ${unknown.map((k) => `"${k}"`).join(', ')}`, 'order');
    const listed = new Set(order);
    const next = [...order, ...rows.map((r) => r.type_key).filter((k) => !listed.has(k))];
    const now = new Date();
    for (const [i, k] of next.entries()) {
      await ctx.db.exec('UPDATE post_types SET sort_order = ?, updated_at = ? WHERE type_key = ?', [i, now, k], { tx });
    }
  });
  return (await readAll(ctx)).defs;
}
