import { QueryTypes, type Sequelize } from 'sequelize';
import { dialectOf } from '../sequelize.js';
import { SEARCH_COLUMNS } from '../migrations/20261123-1000-add-user-list-indexes.js';

/*
 * The admin user list at scale (a million rows): only the ids of a page are searched for, then the
 * rows are read by primary key. Search is substring: on PostgreSQL one LIKE on the stored, lowercased
 * users.search_text, served by its pg_trgm GIN index; on SQLite LIKE on the four columns. On
 * PostgreSQL a search first gathers its matches through the trigram index, unordered and capped (one
 * query, which also counts them and sorts the page from them); only when the matches pass the cap is
 * the page read in order from the sort's index, filtering as it goes, which is quick where the matches
 * are dense among the first rows of the sort; that walk is bounded, and past the bound every match is
 * gathered through the trigram index and the page sorted from them. Pages go by keyset cursor (exact,
 * any depth) or by page number; deep page numbers start from anchors (every ANCHOR_EVERY-th key of the
 * listing, rebuilt in the background once older than ANCHOR_TTL_MS while the old set keeps serving) so
 * page 40,000 does not walk 800,000 index entries. Totals are counted exactly up to a limit and
 * estimated by the planner beyond it. docs/admin-users.md shows the plans.
 */

export const USER_SORT_FIELDS = ['created_at', 'updated_at', 'email', 'name', 'last_name', 'user_name', 'user_type'] as const;
export type UserSortField = (typeof USER_SORT_FIELDS)[number];

export interface UserListQuery {
  q?: string;
  user_type?: string;
  is_verified?: boolean;
  /** created_at ≥ this. */
  created_from?: Date;
  /** created_at < this. */
  created_to?: Date;
  includeDeleted?: boolean;
  sortBy?: UserSortField;
  sortOrder?: 'asc' | 'desc';
  page: number;
  limit: number;
  /** From a previous answer's next_cursor; when given, `page` is not used. */
  cursor?: string;
  /** Count exactly up to this many matches; beyond, estimate (0: always estimate on PostgreSQL). */
  exactCountLimit?: number;
}

export interface UserIdPage {
  ids: string[];
  total: number;
  totalExact: boolean;
  /** Cursor of the page after this one; null on the last page. */
  nextCursor: string | null;
}

/** One page request, resolved: its filters, sort, keyset start and offset (what each way of reading a page needs). */
interface PageQuery {
  q: UserListQuery;
  where: { sql: string; params: Record<string, unknown> };
  s: UserSortField;
  dir: string;
  params: Record<string, unknown>;
  offset: number;
  /** ` AND (key, id) < (after)` for a keyset start on `key`; '' without one. */
  keysetOn: (key: string) => string;
}

/** The page's rows: one more than the limit (to know whether more follow), after the offset. */
const pageTail = (q: UserListQuery, offset: number) => ` LIMIT ${q.limit + 1}${offset ? ` OFFSET ${offset}` : ''}`;

/** A cursor that does not decode, or belongs to another sort. */
export class BadCursorError extends Error {}

const ANCHOR_EVERY = 1000;
const ANCHOR_TTL_MS = 60_000;
const ANCHOR_SETS = 32;
const DEFAULT_EXACT_LIMIT = 10_000;
/** A search gathers at least this many matches before it falls back to the ordered walk (whatever the exact-count limit). */
const GATHER_MIN = 1_000;
/** A search the planner expects to match this many times what it gathers goes straight to the ordered walk. */
const DENSE_FACTOR = 10;
/** The ordered walk of a dense search reads at most this many index entries past the page's offset before it gathers instead. */
const WALK_ENTRIES = 5_000;
/** Below this many rows (the planner's figure) the default listing's anchors are not built ahead. */
const WARM_FROM_ROWS = 10 * ANCHOR_EVERY;

interface Cursor {
  s: UserSortField;
  o: 'asc' | 'desc';
  k: string;
  id: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([1, c.s, c.o, c.k, c.id])).toString('base64url');
}

function decodeCursor(raw: string, s: UserSortField, o: 'asc' | 'desc'): Cursor {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw new BadCursorError('cursor is not one this service issued');
  }
  if (!Array.isArray(v) || v.length !== 5 || v[0] !== 1 || typeof v[3] !== 'string' || typeof v[4] !== 'string') {
    throw new BadCursorError('cursor is not one this service issued');
  }
  if (v[1] !== s || v[2] !== o) throw new BadCursorError('cursor belongs to another sort order; send the same sortBy and sortOrder');
  return { s, o, k: v[3], id: v[4] };
}

const TEXT_SORTS = new Set<UserSortField>(['name', 'last_name', 'user_name']);
const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

interface Anchors {
  at: number;
  keys: { k: string; id: string }[];
}

/** A listing's anchors: the set in use (possibly stale) and the build under way, if any. */
interface AnchorEntry {
  set?: Anchors;
  building?: Promise<Anchors>;
}

export function createUserLister(sequelize: Sequelize) {
  const pg = dialectOf(sequelize) === 'postgres';
  const like = pg ? 'ILIKE' : 'LIKE';
  const anchors = new Map<string, AnchorEntry>();

  /** The sort key as SQL: nullable text sorts as '' (one total order, and the expression the indexes hold). */
  const sortExpr = (s: UserSortField) => (TEXT_SORTS.has(s) ? `COALESCE(${s}, '')` : s);
  /** The key as text, for cursors: PostgreSQL's text form of a timestamp keeps its microseconds. */
  const keyText = (s: UserSortField) => (pg ? `CAST(${sortExpr(s)} AS text)` : sortExpr(s));
  const keyParam = (s: UserSortField, p: string) => (pg && (s === 'created_at' || s === 'updated_at') ? `CAST(${p} AS timestamptz)` : p);

  /**
   * The search (`:pattern`, for `text`). On PostgreSQL one LIKE on the stored `search_text` (the four
   * columns lowercased, joined by a newline; the same answers as ILIKE on each, which PostgreSQL also
   * answers by lowercasing both sides), served by its trigram index. A text holding that newline, and
   * SQLite, go column by column (so no match spans two fields). An explicit ESCAPE: SQLite has no default.
   */
  const searchOf = (text: string) =>
    pg && !text.includes('\n')
      ? `search_text LIKE lower(:pattern) ESCAPE '\\'`
      : SEARCH_COLUMNS.map((c) => `${c} ${like} :pattern ESCAPE '\\'`).join(' OR ');

  function conditions(q: UserListQuery): { sql: string; params: Record<string, unknown> } {
    const where: string[] = [];
    const params: Record<string, unknown> = {};
    if (!q.includeDeleted) where.push('deleted_at IS NULL');
    const text = q.q?.trim();
    if (text) {
      params.pattern = `%${escapeLike(text)}%`;
      where.push(`(${searchOf(text)})`);
    }
    if (q.user_type) {
      where.push('user_type = :userType');
      params.userType = q.user_type;
    }
    if (q.is_verified !== undefined) {
      where.push('is_verified = :verified');
      params.verified = q.is_verified;
    }
    if (q.created_from) {
      where.push('created_at >= :createdFrom');
      params.createdFrom = q.created_from;
    }
    if (q.created_to) {
      where.push('created_at < :createdTo');
      params.createdTo = q.created_to;
    }
    return { sql: where.length ? where.join(' AND ') : '1=1', params };
  }

  const select = <T extends object>(sql: string, replacements: Record<string, unknown>): Promise<T[]> =>
    sequelize.query<T>(sql, { type: QueryTypes.SELECT, replacements });

  async function total(q: UserListQuery, where: { sql: string; params: Record<string, unknown> }): Promise<{ total: number; exact: boolean }> {
    const cap = q.exactCountLimit ?? DEFAULT_EXACT_LIMIT;
    // SQLite has no planner estimate to offer; its count is exact (and reads an index, not the table).
    if (!pg) {
      const [r] = await select<{ n: number }>(`SELECT count(*) AS n FROM users WHERE ${where.sql}`, where.params);
      return { total: Number(r?.n ?? 0), exact: true };
    }
    if (cap > 0) {
      const [r] = await select<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM users WHERE ${where.sql} LIMIT ${cap + 1}) s`, where.params);
      const n = Number(r?.n ?? 0);
      if (n <= cap) return { total: n, exact: true };
    }
    return estimate(cap, where);
  }

  /** The planner's estimate of the matches (PostgreSQL), never below what was seen: more than `cap`. */
  async function estimate(cap: number, where: { sql: string; params: Record<string, unknown> }): Promise<{ total: number; exact: boolean }> {
    const [plan] = await select<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(
      `EXPLAIN (FORMAT JSON) SELECT 1 FROM users WHERE ${where.sql}`,
      where.params,
    );
    const rows = Math.round(plan?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
    return { total: Math.max(rows, cap + 1), exact: false };
  }

  /**
   * Every ANCHOR_EVERY-th key of a listing (per filter and sort). Only the first request of a listing
   * waits for its build; once a set is older than ANCHOR_TTL_MS the next request starts a rebuild in the
   * background and is served from the old set meanwhile (one build at a time per listing).
   */
  function anchorsFor(cacheKey: string, where: { sql: string; params: Record<string, unknown> }, s: UserSortField, dir: string): Promise<Anchors> {
    let entry = anchors.get(cacheKey);
    if (!entry) {
      const oldest = anchors.keys().next();
      if (anchors.size >= ANCHOR_SETS && !oldest.done) anchors.delete(oldest.value);
      entry = {};
      anchors.set(cacheKey, entry);
    }
    const e = entry;
    let building = e.building;
    if (!building && (!e.set || Date.now() - e.set.at >= ANCHOR_TTL_MS)) {
      building = e.building = select<{ k: string; id: string }>(
        `SELECT k, id FROM (SELECT ${keyText(s)} AS k, id, row_number() OVER (ORDER BY ${sortExpr(s)} ${dir}, id ${dir}) AS rn
           FROM users WHERE ${where.sql}) a WHERE rn % ${ANCHOR_EVERY} = 0 ORDER BY rn`,
        where.params,
      )
        .then((keys) => (e.set = { at: Date.now(), keys }))
        .finally(() => (e.building = undefined));
      // A failed background rebuild leaves the old set serving; the next request past the TTL tries again.
      if (e.set) building.catch(() => undefined);
    }
    if (e.set) return Promise.resolve(e.set);
    // Without a set the condition above started a build.
    if (!building) throw new Error('user listing: anchor set neither built nor building');
    return building;
  }

  const anchorKey = (where: { sql: string; params: Record<string, unknown> }, s: UserSortField, o: string) => JSON.stringify([where.sql, where.params, s, o]);

  /**
   * PostgreSQL search: the matches gathered unordered through the trigram index (a bitmap scan; a
   * sequential scan stops early when nearly everything matches), at most `gather` of them, counted and
   * the page sorted from them in the same query. Null when there are more: the caller walks in order.
   */
  async function gathered(
    { q, where, s, dir, params, offset, keysetOn }: PageQuery,
    planned: { total: number; exact: boolean },
  ): Promise<{ rows: { id: string; k: string }[]; total: { total: number; exact: boolean } } | null> {
    const cap = q.exactCountLimit ?? DEFAULT_EXACT_LIMIT;
    const gather = Math.max(cap, GATHER_MIN);
    const found = await select<{ n: string; id: string | null; k: string | null }>(
      `WITH m AS MATERIALIZED (SELECT id, ${sortExpr(s)} AS sk FROM users WHERE ${where.sql} LIMIT ${gather + 1})
       SELECT c.n, p.id, CAST(p.sk AS text) AS k FROM (SELECT count(*) AS n FROM m) c
       LEFT JOIN LATERAL (SELECT id, sk FROM m WHERE 1=1${keysetOn('sk')} ORDER BY sk ${dir}, id ${dir}${pageTail(q, offset)}) p ON true`,
      params,
    );
    const n = Number(found[0]?.n ?? 0);
    if (n > gather) return null;
    const rows = found.filter((r): r is { n: string; id: string; k: string } => r.id !== null);
    return { rows, total: n <= cap ? { total: n, exact: true } : planned };
  }

  /**
   * The ordered walk, bounded: the first `WALK_ENTRIES + offset + limit` entries of the listing (the
   * filters without the search, in the sort's order, read from its index), the search tested on each.
   * Null when they hold fewer matches than the page needs and the listing goes on past them.
   */
  async function walked({ q, s, dir, params, offset, keysetOn }: PageQuery): Promise<{ id: string; k: string }[] | null> {
    if (q.q === undefined) throw new Error('user listing: the ordered walk serves searches only');
    const bound = WALK_ENTRIES + offset + q.limit;
    const unsearched = conditions({ ...q, q: undefined });
    const keyset = keysetOn(sortExpr(s));
    // The walked entries are counted in the same query: fewer than the bound means the walk saw the whole listing.
    const found = await select<{ n: string; id: string | null; k: string | null }>(
      `WITH w AS MATERIALIZED (
         SELECT id, ${sortExpr(s)} AS sk, (${searchOf(q.q.trim())}) AS hit
           FROM users WHERE ${unsearched.sql}${keyset} ORDER BY ${sortExpr(s)} ${dir}, id ${dir} LIMIT ${bound})
       SELECT c.n, p.id, CAST(p.sk AS text) AS k FROM (SELECT count(*) AS n FROM w) c
       LEFT JOIN LATERAL (SELECT id, sk FROM w WHERE hit ORDER BY sk ${dir}, id ${dir}${pageTail(q, offset)}) p ON true`,
      params,
    );
    const rows = found.filter((r): r is { n: string; id: string; k: string } => r.id !== null);
    // Fewer than a page: the answer only if the walk saw the whole listing.
    return rows.length > q.limit || Number(found[0]?.n ?? 0) < bound ? rows : null;
  }

  /**
   * Every match, gathered unordered (through the trigram index: the `OFFSET 0` keeps the subquery
   * planned on its own, so no index order can tempt the planner into the walk), and the page sorted
   * from them (a top-N heapsort, nothing written to disk). Not counted: there are more than a search
   * gathers, so the total stays the planner's estimate.
   */
  async function sortedAll({ q, where, s, dir, params, offset, keysetOn }: PageQuery): Promise<{ id: string; k: string }[]> {
    return select<{ id: string; k: string }>(
      `SELECT id, CAST(sk AS text) AS k FROM (
         SELECT id, sk FROM (SELECT id, ${sortExpr(s)} AS sk FROM users WHERE ${where.sql} OFFSET 0) m
          WHERE 1=1${keysetOn('sk')} ORDER BY sk ${dir}, id ${dir}${pageTail(q, offset)}) p
       ORDER BY sk ${dir}, id ${dir}`,
      params,
    );
  }

  return {
    async page(q: UserListQuery): Promise<UserIdPage> {
      const s = q.sortBy ?? 'created_at';
      const o = q.sortOrder ?? 'desc';
      const dir = o === 'asc' ? 'ASC' : 'DESC';
      const cmp = o === 'asc' ? '>' : '<';
      const where = conditions(q);
      const params: Record<string, unknown> = { ...where.params };
      let after: { k: string; id: string } | null = null;
      let offset = 0;
      if (q.cursor) {
        after = decodeCursor(q.cursor, s, o);
      } else {
        offset = (q.page - 1) * q.limit;
        if (offset >= ANCHOR_EVERY && !where.params.pattern) {
          const set = await anchorsFor(anchorKey(where, s, o), where, s, dir);
          const j = Math.min(Math.floor(offset / ANCHOR_EVERY), set.keys.length) - 1;
          if (j >= 0) {
            after = set.keys[j];
            offset -= (j + 1) * ANCHOR_EVERY;
          }
        }
      }
      if (after) {
        params.afterK = after.k;
        params.afterId = after.id;
      }
      const keysetOn = (key: string) => (after ? ` AND (${key}, id) ${cmp} (${keyParam(s, ':afterK')}, :afterId)` : '');
      const pq: PageQuery = { q, where, s, dir, params, offset, keysetOn };
      let rows: { id: string; k: string }[] | null = null;
      let counted: { total: number; exact: boolean } | null = null;
      if (pg && where.params.pattern) {
        const cap = q.exactCountLimit ?? DEFAULT_EXACT_LIMIT;
        // The planner's figure first (a millisecond): where it is far past what a search gathers, the
        // matches are dense and gathering them would only read the first of many; the ordered walk is quicker.
        const planned = await estimate(cap, where);
        const found = planned.total > DENSE_FACTOR * Math.max(cap, GATHER_MIN) ? null : await gathered(pq, planned);
        if (found) ({ rows, total: counted } = found);
        // More matches than gathered: they are dense, so the sort's index walked in order finds a page soon.
        else counted = planned;
      }
      if (!rows && pg && where.params.pattern) {
        // The ordered walk is quick only where the matches are dense among the first rows of the sort.
        // It reads at most WALK_ENTRIES (+ the page's offset) entries of the sort's index; when those hold
        // too few matches (say 11,000 matches, all among the oldest of a million users, newest first), every
        // match is gathered through the trigram index instead and the page sorted from them: a cost that
        // follows the number of matches, not their place in the sort.
        rows = (await walked(pq)) ?? (await sortedAll(pq));
      }
      if (!rows) {
        const rowsP = select<{ id: string; k: string }>(
          `SELECT id, ${keyText(s)} AS k FROM users WHERE ${where.sql}${keysetOn(sortExpr(s))}
           ORDER BY ${sortExpr(s)} ${dir}, id ${dir}${pageTail(q, offset)}`,
          params,
        );
        [rows, counted] = await Promise.all([rowsP, counted ?? total(q, where)]);
      }
      const more = rows.length > q.limit;
      const pageRows = more ? rows.slice(0, q.limit) : rows;
      const last = pageRows[pageRows.length - 1];
      // Every path that finds the rows has counted them (the planner's figure, the gathering or the count query).
      if (!counted) throw new Error('user listing: a page without a count');
      return {
        ids: pageRows.map((r) => r.id),
        total: counted.total,
        totalExact: counted.exact,
        nextCursor: more && last ? encodeCursor({ s, o, k: String(last.k), id: last.id }) : null,
      };
    },

    /**
     * Builds the anchors of the listing the console opens (live users, newest first) ahead of the first
     * deep page, on PostgreSQL when the table is large; `gatehouse serve` calls it once per process.
     */
    async warm(): Promise<boolean> {
      if (!pg) return false;
      const [r] = await select<{ n: number }>("SELECT reltuples AS n FROM pg_class WHERE relname = 'users' AND relkind = 'r'", {});
      if (!(Number(r?.n ?? 0) >= WARM_FROM_ROWS)) return false;
      const where = conditions({ page: 1, limit: 1 });
      await anchorsFor(anchorKey(where, 'created_at', 'desc'), where, 'created_at', 'DESC');
      return true;
    },
  };
}
