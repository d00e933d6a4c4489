/**
 * The guard on a module's raw SQL (`ctx.db.select` / `ctx.db.exec`): a statement runs only when a real
 * SQL parser (node-sql-parser, its PostgreSQL grammar, on both dialects) proves that it reads and
 * writes nothing but the module's own tables. Anything it cannot prove is refused (fail closed):
 *
 * - lexically: comments, backslashes, backticks and `$` (where the parser's lexer and SQLite's or
 *   PostgreSQL's could disagree on what is code), and any text that does not parse;
 * - one statement, and only SELECT (UNION …), INSERT, UPDATE or DELETE: no DDL (CREATE, DROP, ALTER,
 *   TRUNCATE; schema changes belong in migrations), no PRAGMA, ATTACH, COPY, SET, SELECT … INTO;
 * - every table named anywhere (FROM, JOIN, comma joins, subqueries, CTE bodies, INSERT, UPDATE and
 *   DELETE targets, UPDATE … FROM) is unqualified and one of the module's tables or `<own table>_fts`
 *   (its full-text index, such as `blog_posts_fts`), compared exactly — no other prefix match, so a
 *   module owning `auth` reaches no `auth_tokens`;
 * - a CTE stands for a table only where it is visible (the rest of its query, the CTEs after it): a
 *   CTE named `users` in a subquery does not make the outer `users` the module's; no WITH RECURSIVE;
 * - every function called is one of FUNCTIONS: aggregates, scalar helpers and full-text search, never
 *   one that reads the catalogue, files or other tables (`pragma_table_info`, `query_to_xml`, …).
 *
 * `?` placeholders become `$n` for the parser; SQLite's `MATCH` and PostgreSQL's `@@` (binary
 * operators the grammar lacks) are read as another binary operator, which names no table.
 */
import sqlParser from 'node-sql-parser/build/postgresql.js';

const parser = new sqlParser.Parser();

/** The one name a module may use besides its declared tables: `<own table>_fts`, that table's full-text index. */
const FTS_SUFFIX = '_fts';

/** Functions a module's statement may call (lower case). Add one only if it reads no table and no file. */
const FUNCTIONS = new Set([
  // aggregates and windows
  'count',
  'sum',
  'max',
  'min',
  'avg',
  'row_number',
  'rank',
  // scalar helpers
  'coalesce',
  'nullif',
  'lower',
  'upper',
  'length',
  'trim',
  'abs',
  'round',
  'exists',
  // full-text search: SQLite FTS5 and PostgreSQL
  'bm25',
  'websearch_to_tsquery',
  'plainto_tsquery',
  'to_tsquery',
  'to_tsvector',
  'ts_rank',
  // a transaction-scoped advisory lock (post-types serialises its writers with it)
  'pg_advisory_xact_lock',
  'hashtext',
]);

const STATEMENTS = new Set(['select', 'insert', 'update', 'delete']);

/** Tokens the pre-pass cares about: quoted strings and identifiers (kept as they are), placeholders, operators. */
const TOKENS = /'(?:[^']|'')*'|"(?:[^"]|"")*"|\?|@@|--|\/\*|\bmatch\b|[\\`$]|[^'"?@\-/\\`$m]+|./gis;

class Refused extends Error {}

/** The statement as the PostgreSQL grammar reads it; throws Refused on what the guard will not look through. */
function forParser(sql: string): string {
  let out = '';
  let n = 0;
  for (const [t] of sql.matchAll(TOKENS)) {
    if (t === '?') out += `$${++n}`;
    else if (t === '@@' || t.toLowerCase() === 'match') out += '=';
    else if (t === '--' || t === '/*') throw new Refused('comments are not allowed');
    else if (t === '\\' || t === '`' || t === '$' || t.includes('\\')) throw new Refused(`${t.length === 1 ? t : 'a backslash'} is not allowed`);
    else out += t;
  }
  return out;
}

type Node = Record<string, unknown>;

/** The lower-case name of a called function; Refused when it is schema-qualified or not a plain name. */
function functionName(n: Node): string {
  if (typeof n.name === 'string') return n.name.toLowerCase();
  const name = n.name as { name?: Array<{ value?: unknown }>; schema?: unknown } | undefined;
  const parts = name?.name;
  if (name?.schema || !Array.isArray(parts) || parts.length !== 1 || typeof parts[0]?.value !== 'string')
    throw new Refused('a qualified or computed function name');
  return parts[0].value.toLowerCase();
}

/**
 * Every table reference of a parsed statement, each resolved in its scope: a reference names a CTE
 * only where that CTE is visible — in the rest of its own query (subqueries included) and in the
 * bodies of the CTEs after it, never in its own body, an earlier sibling's or an outer query. Every
 * other reference must be one of the module's tables. Also what the statement calls.
 */
function inventory(ast: Node, owned: (name: string) => boolean): { seen: Set<string>; functions: string[] } {
  const seen = new Set<string>();
  const functions: string[] = [];
  const visit = (node: unknown, ctes: ReadonlySet<string>): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, ctes);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const n = node as Node;
    let scope = ctes;
    if (Array.isArray(n.with)) {
      const inner = new Set(ctes);
      for (const w of n.with as Array<{ name?: { value?: unknown } | string; stmt?: unknown; recursive?: unknown }>) {
        const name = typeof w.name === 'string' ? w.name : w.name?.value;
        if (typeof name !== 'string') throw new Refused('a CTE without a plain name');
        if (w.recursive) throw new Refused('WITH RECURSIVE');
        visit(w.stmt, new Set(inner)); // its body sees the CTEs before it, not itself
        inner.add(name);
      }
      scope = inner;
    }
    if (n.type === 'select' && (n.into as { position?: unknown } | undefined)?.position) throw new Refused('SELECT … INTO');
    if (n.type === 'function' || n.type === 'aggr_func') functions.push(functionName(n));
    // A table node: { db, table, as } in FROM/JOIN/INSERT/UPDATE/DELETE (a column reference also has `table`,
    // its qualifier; a statement has `table`, the list of its targets, walked as nodes of their own).
    if ('table' in n && n.type !== 'column_ref' && n.table !== null && !Array.isArray(n.table)) {
      if (typeof n.table !== 'string') throw new Refused('a computed table reference');
      if (n.db || n.schema) throw new Refused(`a qualified table name (${String(n.db ?? n.schema)}.${n.table})`);
      // Exact: a quoted name in another case is another table (PostgreSQL), so it is not the module's.
      if (!scope.has(n.table) && !owned(n.table)) throw new NotOwned(n.table);
      seen.add(n.table);
    }
    for (const [key, value] of Object.entries(n)) if (key !== 'with') visit(value, scope);
  };
  visit(ast, new Set());
  return { seen, functions };
}

/** A table the module does not own. */
class NotOwned extends Error {
  constructor(readonly table: string) {
    super(table);
  }
}

const notOwned = (moduleId: string, t: string) =>
  new Error(`module ${moduleId} does not own table ${t} (declare it in the manifest's tables; users are read through ctx.users)`);

function check(moduleId: string, own: ReadonlySet<string>, sql: string): void {
  let parsed: { ast: unknown; tableList: string[] };
  try {
    parsed = parser.parse(forParser(sql), { database: 'postgresql' });
  } catch (err) {
    if (err instanceof Refused) throw err;
    throw new Refused('the statement does not parse');
  }
  const statements = (Array.isArray(parsed.ast) ? parsed.ast : [parsed.ast]) as Node[];
  if (statements.length !== 1) throw new Refused('one statement at a time');
  const [stmt] = statements as [Node];
  if (typeof stmt.type !== 'string' || !STATEMENTS.has(stmt.type))
    throw new Refused(`${String(stmt.type).toUpperCase()} statements are not allowed (schema changes belong in migrations)`);
  const owned = (t: string) => own.has(t) || (t.endsWith(FTS_SUFFIX) && own.has(t.slice(0, -FTS_SUFFIX.length)));
  let found: ReturnType<typeof inventory>;
  try {
    found = inventory(stmt, owned);
  } catch (err) {
    if (err instanceof NotOwned) throw notOwned(moduleId, err.table);
    throw err;
  }
  const { seen, functions } = found;
  // The parser's own list, as a second opinion: a name the walk above did not check as a table (and
  // so did not resolve in its scope) must be the module's.
  for (const entry of parsed.tableList) {
    const [, db, table] = entry.split('::');
    if (db !== 'null') throw new Refused(`a qualified table name (${db}.${table})`);
    if (!seen.has(table ?? '') && !owned(table ?? '')) throw notOwned(moduleId, table ?? '');
  }
  for (const f of functions) if (!FUNCTIONS.has(f)) throw new Refused(`function ${f}() is not allowed`);
}

/**
 * Throws unless `sql` is one SELECT, INSERT, UPDATE or DELETE that names only `tables` (or `<table>_…`)
 * and calls only allowed functions; see the top of this file for every rule.
 */
export function assertOwnTables(moduleId: string, tables: ReadonlySet<string>, sql: string): void {
  try {
    check(moduleId, tables, sql);
  } catch (err) {
    if (err instanceof Refused) throw new Error(`module ${moduleId}: statement refused: ${err.message}`);
    throw err;
  }
}
