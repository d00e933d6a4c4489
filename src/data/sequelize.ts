import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { Sequelize, Transaction } from 'sequelize';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { routeSequelizeWarnings } from './sequelize-warnings.js';

export type Dialect = 'sqlite' | 'postgres';

export const SQLITE_FILE = 'gatehouse.sqlite';

/** The SQLite file the configuration names (a `sqlite:` DATABASE_URL, else one in the data dir); null for PostgreSQL. */
export function sqliteFile(config: Pick<Config, 'databaseUrl' | 'dataDirAbs'>): string | null {
  const url = config.databaseUrl;
  if (!url) return path.join(config.dataDirAbs, SQLITE_FILE);
  return url.startsWith('sqlite:') ? url.replace(/^sqlite:(\/\/)?/, '') : null;
}

/**
 * Opens the database the configuration names: PostgreSQL from DATABASE_URL, else an SQLite file in
 * the data dir. The driver is imported here, for the one dialect in use: an SQLite process never
 * loads pg, nor a PostgreSQL one sqlite3.
 */
export async function createSequelize(config: Pick<Config, 'databaseUrl' | 'dataDirAbs'>, logger?: Logger): Promise<Sequelize> {
  const logging = logger ? (sql: string) => logger.trace({ sql }, 'sql') : false;
  const storage = sqliteFile(config);
  if (storage === null) {
    // Non-null: sqliteFile(config) is null only when DATABASE_URL names PostgreSQL.
    const pg = new Sequelize(config.databaseUrl!, {
      dialect: 'postgres',
      // Handed over rather than required by name inside Sequelize, so a bundle (the single executable) has it.
      dialectModule: (await import('pg')).default,
      logging,
      pool: { max: 10, min: 0, idle: 10_000, acquire: 15_000 },
      define: { underscored: true, timestamps: false },
    });
    if (logger) routeSequelizeWarnings(pg, logger);
    return pg;
  }
  if (storage !== ':memory:') {
    mkdirSync(path.dirname(storage), { recursive: true, mode: 0o750 });
    // The file holds password hashes: create it owner-only (SQLite gives its -wal/-shm files the same mode).
    if (!existsSync(storage)) closeSync(openSync(storage, 'a', 0o600));
  }
  const sqlite3 = await sqliteDriver();
  const sequelize = new Sequelize({
    dialect: 'sqlite',
    dialectModule: sqlite3,
    storage,
    logging,
    // SQLite allows one writer: a single shared connection, WAL and a busy timeout keep concurrent
    // requests (and a second process on the same file) from failing with SQLITE_BUSY.
    pool: { max: 1, min: 0, idle: 60_000 },
    // Waits for a lock held elsewhere in short steps (a quarter second each, up to 20 retries with
    // growing pauses between, about 10 s in all): a step blocks one of libuv's few threads, and a
    // stopping process waits for the steps in hand before it can exit.
    retry: { max: 20, match: [/SQLITE_BUSY/] },
    // A deferred transaction that reads and then writes cannot wait for another process's writer (the
    // CLI beside the server): SQLite refuses the upgrade with SQLITE_BUSY at once, busy timeout or
    // not. IMMEDIATE takes the write lock at BEGIN, where the busy timeout does wait.
    transactionType: Transaction.TYPES.IMMEDIATE,
    define: { underscored: true, timestamps: false },
  });
  takeTurns(sequelize);
  // Its warnings (a failed COMMIT or ROLLBACK in an outage) as JSON lines of the app's log.
  if (logger) routeSequelizeWarnings(sequelize, logger);
  sequelize.addHook('afterConnect', async (connection: unknown) => {
    const db = connection as { run: (sql: string, cb: (err: Error | null) => void) => void; configure: (opt: string, v: number) => void };
    db.configure('busyTimeout', SQLITE_BUSY_STEP_MS);
    await new Promise<void>((resolve, reject) => db.run('PRAGMA journal_mode=WAL', (e) => (e ? reject(e) : resolve())));
  });
  return sequelize;
}

/** One wait for another process's lock (see `retry` above). */
const SQLITE_BUSY_STEP_MS = 250;

/** How long a transaction waits for its turn before going ahead anyway (then SQLite's busy timeout applies). */
const TURN_WAIT_MS = 10_000;

/**
 * SQLite transactions of this process take turns. Each one has a connection of its own, and
 * node-sqlite3 runs statements on libuv's small thread pool: with more writers waiting at BEGIN
 * IMMEDIATE than threads, the busy waits hold every thread and the transaction that has the lock
 * cannot run its next statement until they time out (20 parallel blog posts took 13 s and failed
 * with 503). Waiting here costs no thread. Nested calls (`{ transaction }`) and unmanaged
 * transactions are left alone; another process (the CLI) still meets the busy timeout.
 */
function takeTurns(sequelize: Sequelize): void {
  const original = sequelize.transaction.bind(sequelize) as (...args: unknown[]) => Promise<unknown>;
  let tail: Promise<void> = Promise.resolve();
  const turn = <T>(work: () => Promise<T>): Promise<T> => {
    const before = tail;
    let release!: () => void;
    tail = new Promise<void>((r) => (release = r));
    let timer: NodeJS.Timeout | undefined;
    const waited = Promise.race([before, new Promise<void>((r) => (timer = setTimeout(r, TURN_WAIT_MS)).unref())]);
    return waited.then(work).finally(() => {
      clearTimeout(timer);
      release();
    });
  };
  (sequelize as { transaction: unknown }).transaction = (...args: unknown[]) => {
    const fn = args.find((a) => typeof a === 'function');
    const opts = args.find((a) => a && typeof a === 'object') as { transaction?: unknown } | undefined;
    if (!fn || opts?.transaction) return original(...args);
    return turn(() => original(...args));
  };
}

export const dialectOf = (s: Sequelize): Dialect => (s.getDialect() === 'postgres' ? 'postgres' : 'sqlite');

/**
 * The database health probe (db-health.ts): PostgreSQL answers `SELECT 1` through the pool (which
 * also drops the connections the outage broke); SQLite must be writable, which reads alone do not
 * prove while another process holds the write lock, so a connection of its own takes and releases
 * the lock with a short busy timeout.
 */
export function databaseProbe(
  config: Pick<Config, 'databaseUrl' | 'dataDirAbs'>,
  query: (sql: string) => Promise<unknown>,
  busyMs = 200,
): () => Promise<void> {
  const file = sqliteFile(config);
  if (file === null || file === ':memory:') return async () => void (await query('SELECT 1'));
  return async () => {
    const sqlite3 = await sqliteDriver();
    await new Promise<void>((resolve, reject) => {
      const db = new sqlite3.Database(file, sqlite3.OPEN_READWRITE, (openErr) => {
        if (openErr) return reject(openErr);
        db.configure('busyTimeout', busyMs);
        db.exec('BEGIN IMMEDIATE; ROLLBACK', (err) => db.close(() => (err ? reject(err) : resolve())));
      });
    });
  };
}

/** node-sqlite3, imported by the first SQLite use (a PostgreSQL process never loads it). */
const sqliteDriver = async () => (await import('sqlite3')).default;
