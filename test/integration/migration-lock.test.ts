import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clearMigrationLock, MigrationLockedError, MIGRATION_LOCK_KEY, readMigrationLock, withMigrationLock } from '../../src/data/migration-lock.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('the migration lock', () => {
  it('when a second migration starts while one runs, then it is refused naming the running one, and the lock is free afterwards', async () => {
    const inner = await withMigrationLock(t.app, 'first', async () => {
      const err = await withMigrationLock(t.app, 'second', async () => 'ran').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MigrationLockedError);
      expect((err as MigrationLockedError).state).toMatchObject({ alive: true, holder: { pid: process.pid, what: 'first' } });
      expect((err as Error).message).toContain('another migration is running');
      return 'done';
    });
    expect(inner).toBe('done');
    expect(await readMigrationLock(t.app)).toBeNull();
    expect(await withMigrationLock(t.app, 'third', async () => 'ran')).toBe('ran');
  });

  it('when the holder died, then the lock is reported stale, not taken over, and clearing it lets migrations run', async () => {
    const dead = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).toString());
    await t.app.models.Setting.create({
      key: MIGRATION_LOCK_KEY,
      value: { holder: 'gone', pid: dead, host: os.hostname(), what: 'migrating 3 migrations', since: new Date().toISOString() },
      updated_at: new Date(),
    });
    const err = await withMigrationLock(t.app, 'now', async () => 'ran').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MigrationLockedError);
    expect((err as Error).message).toBe(
      `a migration lock is held by process ${dead} on ${os.hostname()} (migrating 3 migrations, since ${(err as MigrationLockedError).state.holder.since}), which is no longer running: it died while migrating`,
    );
    expect(await readMigrationLock(t.app)).toMatchObject({ alive: false });
    expect(await clearMigrationLock(t.app)).toBe(true);
    expect(await withMigrationLock(t.app, 'now', async () => 'ran')).toBe('ran');
  });
});
