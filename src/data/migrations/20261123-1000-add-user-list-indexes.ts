import type { MigrationDef } from '../migration-types.js';

/** Columns the admin search matches by substring. */
export const SEARCH_COLUMNS = ['email', 'name', 'last_name', 'user_name'] as const;

/** The ordered listings of the admin list (live users), each with id as tie-break for keyset cursors. */
const LIST_INDEXES: [name: string, key: string][] = [
  ['users_list_created_at', 'created_at, id'],
  ['users_list_email', 'email, id'],
  ['users_list_name', "(COALESCE(name, '')), id"],
];

export const trigramIndexName = (column: string) => `users_${column}_trgm`;

/**
 * Admin search and listing at a million users. On PostgreSQL, trigram GIN indexes (pg_trgm) serve
 * `ILIKE '%part%'` on the searched columns; on both dialects, partial indexes over live users serve
 * the sorts and keyset cursors. pg_trgm ships with PostgreSQL (contrib) and is a trusted extension,
 * so the database owner may create it; `gatehouse doctor` says when it is missing.
 * Plain CREATE INDEX (not CONCURRENTLY: migrations run in a transaction) blocks writes to users while it builds.
 */
export const addUserListIndexes: MigrationDef = {
  name: '20261123-1000-add-user-list-indexes',
  async up({ sequelize, transaction, dialect }) {
    const run = (sql: string) => sequelize.query(sql, { transaction });
    if (dialect === 'postgres') {
      const [available] = (await run("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'"));
      if (!available.length) {
        throw new Error('the PostgreSQL extension pg_trgm is not available on this server: install PostgreSQL contrib (Debian: postgresql-contrib), then run gatehouse migrate');
      }
      await run('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      for (const c of SEARCH_COLUMNS) await run(`CREATE INDEX ${trigramIndexName(c)} ON users USING gin (${c} gin_trgm_ops)`);
    }
    for (const [name, key] of LIST_INDEXES) await run(`CREATE INDEX ${name} ON users (${key}) WHERE deleted_at IS NULL`);
  },
  async down({ sequelize, transaction, dialect }) {
    const run = (sql: string) => sequelize.query(sql, { transaction });
    for (const [name] of LIST_INDEXES) await run(`DROP INDEX IF EXISTS ${name}`);
    // The extension stays: other schemas in the database may use it.
    if (dialect === 'postgres') for (const c of SEARCH_COLUMNS) await run(`DROP INDEX IF EXISTS ${trigramIndexName(c)}`);
  },
};
