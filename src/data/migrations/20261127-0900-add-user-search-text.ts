import type { MigrationDef } from '../migration-types.js';
import { SEARCH_COLUMNS, trigramIndexName, trigramIndexSql, trigramReady } from './20261123-1000-add-user-list-indexes.js';

/**
 * The four searched columns, lowercased and joined by a newline: what admin search matches on
 * PostgreSQL (`search_text LIKE lower(:pattern)`, the same answers as `ILIKE` on each column, which
 * PostgreSQL also answers by lowercasing both sides). A pattern holding the newline is searched column
 * by column instead (repositories/user-list.ts), so no match spans two fields.
 */
export const SEARCH_TEXT_SQL = `lower(${SEARCH_COLUMNS.map((c) => `COALESCE(${c}, '')`).join(" || chr(10) || ")})`;
export const SEARCH_INDEX = 'users_search_trgm';
/** The statement that makes the search index (also the doctor's hint when it is missing). */
export const searchIndexSql = () => `CREATE INDEX ${SEARCH_INDEX} ON users USING gin (search_text gin_trgm_ops)`;

/**
 * One stored, generated search column with one trigram index, in place of the four per-column trigram
 * indexes: a match is then one LIKE on one value instead of up to four ILIKEs (each lowercasing its
 * column again), and one index scan instead of four. At a million users the recheck of 111,000 matches
 * takes half the time (docs/admin-users.md). PostgreSQL only; SQLite keeps LIKE on the four columns.
 * Adding a stored column rewrites the users table once, holding it locked meanwhile (about 30 s at a
 * million users on the bench machine).
 */
export const addUserSearchText: MigrationDef = {
  name: '20261127-0900-add-user-search-text',
  async up({ sequelize, transaction, dialect }) {
    if (dialect !== 'postgres') return;
    const run = (sql: string) => sequelize.query(sql, { transaction });
    await run(`ALTER TABLE users ADD COLUMN search_text text GENERATED ALWAYS AS (${SEARCH_TEXT_SQL}) STORED`);
    for (const c of SEARCH_COLUMNS) await run(`DROP INDEX IF EXISTS ${trigramIndexName(c)}`);
    if (await trigramReady(run)) await run(searchIndexSql());
  },
  async down({ sequelize, transaction, dialect }) {
    if (dialect !== 'postgres') return;
    const run = (sql: string) => sequelize.query(sql, { transaction });
    await run(`DROP INDEX IF EXISTS ${SEARCH_INDEX}`);
    await run('ALTER TABLE users DROP COLUMN IF EXISTS search_text');
    if (await trigramReady(run)) for (const c of SEARCH_COLUMNS) await run(trigramIndexSql(c));
  },
};
