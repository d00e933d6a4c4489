import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { json, LISTENING, removeTempDirs, ROOT, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);
afterEach(stopStartedClis);

const PASSWORD = 'Upgrade-Keeps-Serving-42';

/**
 * A "next release": this build copied, with version 0.99.0 and one more core migration appended
 * (written as the build emits it), which either works or fails halfway through.
 */
function makeRelease(migrationBody: string): string {
  const dir = tempDir('gh-release-');
  for (const entry of ['bin', 'dist', 'templates', 'modules']) cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, version: '0.99.0' }));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const index = path.join(dir, 'dist', 'src', 'data', 'migrations', 'index.js');
  const text = readFileSync(index, 'utf8');
  const next = `{ name: '20991231-0000-next', async up({ sequelize, transaction }) { ${migrationBody} }, async down() {} }`;
  const appended = text.replace(/(migrations: \[[^\]]*)\]/, `$1, ${next}]`);
  if (appended === text) throw new Error('could not find the core migration list in the build');
  writeFileSync(index, appended);
  return dir;
}

const tableExists = (dir: string, table: string) =>
  new Promise<boolean>((resolve, reject) => {
    const db = new sqlite3.Database(path.join(dir, 'gatehouse.sqlite'));
    db.get("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", [table], (err, row) =>
      db.close(() => (err ? reject(err) : resolve(Boolean(row)))),
    );
  });

describe('gatehouse upgrade', () => {
  it("when the new release's migration fails, then nothing changes, the running version keeps serving, and the retry command is given; a good release then upgrades", async () => {
    const dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
    const email = `up.${Date.now()}@example.test`;
    expect((await runCli(['user', 'create', '--type', 'customer', '--email', email, '--password-stdin', '--data-dir', dir], { input: PASSWORD })).code).toBe(0);
    const before = json(await runCli(['migrate', '--status', '--json', '--data-dir', dir])).applied as string[];

    const s = startCli(['serve', '--port', '0', '--data-dir', dir]);
    const url = (await s.waitFor(LISTENING))[1];
    const login = () =>
      fetch(`${url}/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) });
    expect((await login()).status).toBe(200);

    const broken = makeRelease(
      "await sequelize.query('CREATE TABLE upgrade_half_done (id INTEGER PRIMARY KEY)', { transaction }); throw new Error('deliberate upgrade failure');",
    );
    const failed = await runCli(['upgrade', '--release', broken, '--data-dir', dir]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('✔ Preflight (doctor)');
    expect(failed.stderr).toContain('✔ Backup');
    expect(failed.stderr).toMatch(
      /error: upgrade to 0\.99\.0 failed while migrating \(.*deliberate upgrade failure.*\); the database is unchanged and 0\.1\.0 keeps running/,
    );
    expect(failed.stderr).toContain(`retry: gatehouse upgrade --release ${broken} --data-dir ${dir}`);
    const backupFile = /hint: backup: (\S+\.tar\.gz)\./.exec(failed.stderr)?.[1];
    expect(backupFile && existsSync(backupFile)).toBe(true);

    // The old version never stopped and the schema is as it was.
    expect((await fetch(`${url}/ready`)).status).toBe(200);
    expect((await login()).status).toBe(200);
    expect(await tableExists(dir, 'upgrade_half_done')).toBe(false);
    expect(json(await runCli(['migrate', '--status', '--json', '--data-dir', dir]))).toMatchObject({ applied: before, pending: [], lock: null });

    const good = makeRelease("await sequelize.query('CREATE TABLE upgrade_next (id INTEGER PRIMARY KEY)', { transaction });");
    const ok = await runCli(['upgrade', '--release', good, '--json', '--data-dir', dir]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(json(ok)).toMatchObject({ success: true, from: '0.1.0', to: '0.99.0' });
    expect(await tableExists(dir, 'upgrade_next')).toBe(true);
    s.child.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);
  });

  it('when the release is missing or holds no Gatehouse, then it fails (exit 1, as restore of such a file) and nothing is touched', async () => {
    const dir = tempDir();
    const missing = await runCli(['upgrade', '--release', path.join(dir, 'nope.tar.gz'), '--data-dir', dir]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
    const empty = await runCli(['upgrade', '--release', tempDir(), '--data-dir', dir]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('holds no Gatehouse');
    expect(existsSync(path.join(dir, 'backups'))).toBe(false);
  });
});
