import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { json, removeTempDirs, runCli, stopStartedClis, tempDir } from '../helpers/cli.js';
import { backupRoundTrip } from './backup-roundtrip.js';

afterAll(removeTempDirs);
afterEach(stopStartedClis);

async function initDir(): Promise<string> {
  const dir = tempDir();
  const r = await runCli(['init', '--yes', '--data-dir', dir]);
  expect(r.code, r.stderr).toBe(0);
  return dir;
}

/** A statement on the data dir's SQLite file, as another process would run it. */
function sql(dir: string, statement: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(path.join(dir, 'gatehouse.sqlite'));
    db.run(statement, params, (err) => db.close(() => (err ? reject(err) : resolve())));
  });
}

describe('gatehouse backup and restore (SQLite)', () => {
  it('when a populated instance is backed up, changed and restored, then users, pictures and config are as at the backup', async () => {
    await backupRoundTrip(await initDir());
  });

  it('when the archive is damaged or not a backup, then restore refuses before touching anything', async () => {
    const dir = await initDir();
    const b = json(await runCli(['backup', '--json', '--out', path.join(dir, 'b.tar.gz'), '--data-dir', dir]));
    // Re-pack with one byte of the database changed: the manifest's checksum no longer matches.
    const work = tempDir();
    execFileSync('tar', ['-xzf', b.file, '-C', work]);
    writeFileSync(path.join(work, 'config.json'), '{"PORT": 1}');
    const bad = path.join(dir, 'bad.tar.gz');
    execFileSync('tar', ['-czf', bad, '-C', work, '.']);
    const r = await runCli(['restore', bad, '--yes', '--data-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is damaged: config.json does not match its checksum');
    const junk = path.join(dir, 'junk.tar.gz');
    writeFileSync(junk, 'not an archive');
    const j = await runCli(['restore', junk, '--yes', '--data-dir', dir]);
    expect(j.code).toBe(1);
    expect(j.stderr).toContain('is not a readable archive');
    expect(j.stderr).not.toContain('    at ');
  });
});

describe('gatehouse migrate --status and the migration lock', () => {
  it('when a process died holding the migration lock, then --status says so with the command that clears it, and --unlock clears it', async () => {
    const dir = await initDir();
    const free = json(await runCli(['migrate', '--status', '--json', '--data-dir', dir]));
    expect(free).toMatchObject({ success: true, pending: [], lock: null });
    expect(free.applied.length).toBeGreaterThanOrEqual(4);

    // A pid that no longer exists: a child that has exited.
    const dead = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).toString());
    const holder = { holder: 'x', pid: dead, host: (await import('node:os')).hostname(), what: 'migrating 2 migrations', since: '2026-01-01T00:00:00.000Z' };
    await sql(dir, 'INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)', ['migrations.lock', JSON.stringify(holder), new Date().toISOString()]);

    const status = await runCli(['migrate', '--status', '--data-dir', dir]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`held by process ${dead} on`);
    expect(status.stdout).toContain('which is no longer running: it died while migrating');
    expect(status.stdout).toContain(`gatehouse migrate --unlock --data-dir ${dir}`);
    expect(json(await runCli(['migrate', '--status', '--json', '--data-dir', dir])).lock).toMatchObject({ pid: dead, alive: false });

    expect((await runCli(['migrate', '--unlock', '--data-dir', dir])).code).toBe(2);
    const unlock = await runCli(['migrate', '--unlock', '--yes', '--data-dir', dir]);
    expect(unlock.code, unlock.stderr).toBe(0);
    expect(unlock.stdout).toContain('Removed the migration lock.');
    expect(json(await runCli(['migrate', '--status', '--json', '--data-dir', dir])).lock).toBeNull();
  });
});
