import type { Sequelize } from 'sequelize';
import { run } from './tools.js';

interface SqliteBackup {
  step(pages: number, cb: (err: Error | null) => void): void;
  finish(cb?: (err: Error | null) => void): void;
}
interface SqliteDatabase {
  backup(file: string, cb: (err: Error | null) => void): SqliteBackup;
  backup(file: string, destName: string, sourceName: string, filenameIsDest: boolean, cb: (err: Error | null) => void): SqliteBackup;
}

/** SQLite's online backup API on the live connection: a consistent copy while the server keeps running. */
async function sqliteCopy(sequelize: Sequelize, file: string, direction: 'to-file' | 'from-file'): Promise<void> {
  const cm = sequelize.connectionManager;
  // On SQLite the connection is the sqlite3 Database object (lib/dialects/sqlite/connection-manager.js).
  const db = (await cm.getConnection({ type: 'write' })) as SqliteDatabase;
  try {
    await new Promise<void>((resolve, reject) => {
      const done = (err: Error | null) => (err ? reject(err) : undefined);
      const backup =
        direction === 'to-file'
          ? db.backup(file, done)
          : // Pages of the file written into the live database, under SQLite's own locking: every
            // connection (a running server's too) sees the restored content.
            db.backup(file, 'main', 'main', false, done);
      backup.step(-1, (err) => {
        if (err) return reject(err);
        backup.finish((e) => (e ? reject(e) : resolve()));
      });
    });
  } finally {
    cm.releaseConnection(db);
  }
}

export const sqliteBackup = (sequelize: Sequelize, file: string) => sqliteCopy(sequelize, file, 'to-file');
export const sqliteRestore = (sequelize: Sequelize, file: string) => sqliteCopy(sequelize, file, 'from-file');

const PG_CLIENT = 'postgresql-client';

/** The URL's password goes through the environment, not argv (ps shows argv to every user). */
function pgArgs(databaseUrl: string): { env: NodeJS.ProcessEnv; dbname: string } {
  const url = new URL(databaseUrl);
  const env = { ...process.env, PGPASSWORD: decodeURIComponent(url.password) };
  url.password = '';
  return { env, dbname: url.toString() };
}

export async function pgDump(databaseUrl: string, file: string): Promise<void> {
  const { env, dbname } = pgArgs(databaseUrl);
  await run('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--file=${file}`, `--dbname=${dbname}`], { env, missing: PG_CLIENT });
}

export async function pgRestore(databaseUrl: string, file: string): Promise<void> {
  const { env, dbname } = pgArgs(databaseUrl);
  await run('pg_restore', ['--clean', '--if-exists', '--no-owner', '--no-privileges', '--single-transaction', `--dbname=${dbname}`, file], {
    env,
    missing: PG_CLIENT,
  });
}
