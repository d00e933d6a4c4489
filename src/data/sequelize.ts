import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { Sequelize, Transaction } from 'sequelize';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import pg from 'pg';
import sqlite3 from 'sqlite3';

export type Dialect = 'sqlite' | 'postgres';

export const SQLITE_FILE = 'gatehouse.sqlite';

/** The SQLite file the configuration names (a `sqlite:` DATABASE_URL, else one in the data dir); null for PostgreSQL. */
export function sqliteFile(config: Pick<Config, 'databaseUrl' | 'dataDirAbs'>): string | null {
  const url = config.databaseUrl;
  if (!url) return path.join(config.dataDirAbs, SQLITE_FILE);
  return url.startsWith('sqlite:') ? url.replace(/^sqlite:(\/\/)?/, '') : null;
}

/** Opens the database the configuration names: PostgreSQL from DATABASE_URL, else an SQLite file in the data dir. */
export function createSequelize(config: Pick<Config, 'databaseUrl' | 'dataDirAbs'>, logger?: Logger): Sequelize {
  const logging = logger ? (sql: string) => logger.trace({ sql }, 'sql') : false;
  const storage = sqliteFile(config);
  if (storage === null) {
    return new Sequelize(config.databaseUrl!, {
      dialect: 'postgres',
      // Handed over rather than required by name inside Sequelize, so a bundle (the single executable) has it.
      dialectModule: pg,
      logging,
      pool: { max: 10, min: 0, idle: 10_000, acquire: 15_000 },
      define: { underscored: true, timestamps: false },
    });
  }
  if (storage !== ':memory:') {
    mkdirSync(path.dirname(storage), { recursive: true, mode: 0o750 });
    // The file holds password hashes: create it owner-only (SQLite gives its -wal/-shm files the same mode).
    if (!existsSync(storage)) closeSync(openSync(storage, 'a', 0o600));
  }
  const sequelize = new Sequelize({
    dialect: 'sqlite',
    dialectModule: sqlite3,
    storage,
    logging,
    // SQLite allows one writer: a single shared connection, WAL and a busy timeout keep concurrent
    // requests (and a second process on the same file) from failing with SQLITE_BUSY.
    pool: { max: 1, min: 0, idle: 60_000 },
    retry: { max: 5, match: [/SQLITE_BUSY/] },
    // A deferred transaction that reads and then writes cannot wait for another process's writer (the
    // CLI beside the server): SQLite refuses the upgrade with SQLITE_BUSY at once, busy timeout or
    // not. IMMEDIATE takes the write lock at BEGIN, where the busy timeout does wait.
    transactionType: Transaction.TYPES.IMMEDIATE,
    define: { underscored: true, timestamps: false },
  });
  sequelize.addHook('afterConnect', async (connection: unknown) => {
    const db = connection as { run: (sql: string, cb: (err: Error | null) => void) => void; configure: (opt: string, v: number) => void };
    db.configure('busyTimeout', 5000);
    await new Promise<void>((resolve, reject) => db.run('PRAGMA journal_mode=WAL', (e) => (e ? reject(e) : resolve())));
  });
  return sequelize;
}

export const dialectOf = (s: Sequelize): Dialect => (s.getDialect() === 'postgres' ? 'postgres' : 'sqlite');
