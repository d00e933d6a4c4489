import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { AppContext } from '../app-context.js';

export const MIGRATION_LOCK_KEY = 'migrations.lock';

export interface LockHolder {
  holder: string;
  pid: number;
  host: string;
  what: string;
  since: string;
}

export interface LockState {
  holder: LockHolder;
  /** false: the holder ran on this host and that process is gone, so the lock is stale. null: another host, unknown. */
  alive: boolean | null;
}

/** Thrown when another process holds the lock; carries who, and whether it is still running. */
export class MigrationLockedError extends Error {
  constructor(readonly state: LockState) {
    super(describeLock(state));
    this.name = 'MigrationLockedError';
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function describeLock({ holder, alive }: LockState): string {
  const who = `process ${holder.pid} on ${holder.host} (${holder.what}, since ${holder.since})`;
  if (alive === false) return `a migration lock is held by ${who}, which is no longer running: it died while migrating`;
  return `another migration is running: the lock is held by ${who}`;
}

/** The stored holder, whether the driver parsed the JSON column or not. */
const holderOf = (v: unknown) => (typeof v === 'string' ? (JSON.parse(v) as LockHolder) : (v as LockHolder | null | undefined));

// The lock lives in the settings table, which the first core migration creates: before it there is nothing to race.
async function settingsExist(app: AppContext): Promise<boolean> {
  const tables = (await app.sequelize.getQueryInterface().showAllTables()) as unknown[];
  return tables.some((t) => (typeof t === 'string' ? t : (t as { tableName?: string }).tableName) === 'settings');
}

/** Who holds the migration lock, if anyone. */
export async function readMigrationLock(app: AppContext): Promise<LockState | null> {
  if (!(await settingsExist(app))) return null;
  const row = await app.repos.settings.get(MIGRATION_LOCK_KEY);
  if (!row) return null;
  // Non-null: the lock row always holds its holder (written by the acquire).
  const parsed = holderOf(row.value)!;
  return { holder: parsed, alive: parsed.host === os.hostname() ? processAlive(parsed.pid) : null };
}

/** Removes the lock whoever holds it (`gatehouse migrate --unlock`). */
export async function clearMigrationLock(app: AppContext): Promise<boolean> {
  if (!(await settingsExist(app))) return false;
  return app.repos.settings.remove(MIGRATION_LOCK_KEY);
}

/**
 * Runs `fn` holding the migration lock (a row in the shared settings table, so it works across hosts
 * on PostgreSQL). A lock left by a process that died is never taken over silently: the error says so,
 * and `gatehouse migrate --unlock` clears it once the operator has looked.
 */
export async function withMigrationLock<T>(app: AppContext, what: string, fn: () => Promise<T>): Promise<T> {
  if (!(await settingsExist(app))) return fn();
  const holder: LockHolder = { holder: randomUUID(), pid: process.pid, host: os.hostname(), what, since: new Date().toISOString() };
  if (!(await app.repos.settings.claim(MIGRATION_LOCK_KEY, holder))) {
    const state = await readMigrationLock(app);
    if (!state) return withMigrationLock(app, what, fn);
    throw new MigrationLockedError(state);
  }
  try {
    return await fn();
  } finally {
    await app.repos.settings.removeIf(MIGRATION_LOCK_KEY, (v) => holderOf(v)?.holder === holder.holder).catch(() => undefined);
  }
}
