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
/** The statement that makes one trigram index (also the doctor's hint when one is missing). */
export const trigramIndexSql = (column: string) => `CREATE INDEX ${trigramIndexName(column)} ON users USING gin (${column} gin_trgm_ops)`;

/**
 * pg_trgm in this database: already there, or created now. False, without failing the migration, when
 * the server does not ship it or this role may not create it (the attempt runs in a savepoint, so the
 * migration's transaction goes on); search then reads the table, and `gatehouse doctor` says so.
 */
export async function trigramReady(run: (sql: string) => Promise<[unknown[], unknown]>): Promise<boolean> {
  const [installed] = await run("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'");
  if (installed.length) return true;
  const [available] = await run("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'");
  if (!available.length) return false;
  await run('SAVEPOINT gatehouse_pg_trgm');
  try {
    await run('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await run('RELEASE SAVEPOINT gatehouse_pg_trgm');
    return true;
  } catch {
    await run('ROLLBACK TO SAVEPOINT gatehouse_pg_trgm');
    return false;
  }
}

/**
 * Admin search and listing at a million users. On PostgreSQL, trigram GIN indexes (pg_trgm) serve
 * `ILIKE '%part%'` on the searched columns; on both dialects, partial indexes over live users serve
 * the sorts and keyset cursors. pg_trgm ships with PostgreSQL (contrib) and is a trusted extension,
 * so the database owner may create it; where it cannot be had (not shipped, or a role that may not
 * create it) the migration goes on without the trigram indexes and `gatehouse doctor` says how to add them.
 * Plain CREATE INDEX (not CONCURRENTLY: migrations run in a transaction) blocks writes to users while it builds.
 */
export const addUserListIndexes: MigrationDef = {
  name: '20261123-1000-add-user-list-indexes',
  async up({ sequelize, transaction, dialect }) {
    const run = (sql: string) => sequelize.query(sql, { transaction });
    if (dialect === 'postgres' && (await trigramReady(run))) for (const c of SEARCH_COLUMNS) await run(trigramIndexSql(c));
    for (const [name, key] of LIST_INDEXES) await run(`CREATE INDEX ${name} ON users (${key}) WHERE deleted_at IS NULL`);
  },
  async down({ sequelize, transaction, dialect }) {
    const run = (sql: string) => sequelize.query(sql, { transaction });
    for (const [name] of LIST_INDEXES) await run(`DROP INDEX IF EXISTS ${name}`);
    // The extension stays: other schemas in the database may use it.
    if (dialect === 'postgres') for (const c of SEARCH_COLUMNS) await run(`DROP INDEX IF EXISTS ${trigramIndexName(c)}`);
  },
};
