import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv, json, removeTempDirs, runCli, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);

/** Everything under `dir`, as relative paths (empty when nothing was created). */
const contents = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).sort() : []);

describe('a check or a refused command creates nothing', () => {
  it('when doctor runs twice on a data dir that does not exist, then it stays missing and doctor names the command that makes it', async () => {
    const dir = path.join(tempDir(), 'wrong');
    for (let run = 0; run < 2; run++) {
      const r = await runCli(['doctor', '--json', '--data-dir', dir]);
      expect(r.code).toBe(1);
      const checks = json(r).checks as { id: string; status: string; hint?: string }[];
      expect(checks.find((c) => c.id === 'data-dir')).toMatchObject({ status: 'fail', hint: expect.stringContaining(`gatehouse init --data-dir ${dir}`) });
      expect(existsSync(dir)).toBe(false);
    }
  });

  it('when doctor runs twice on an empty data dir, then no outbox and no SQLite file appear, and it keeps failing', async () => {
    const dir = tempDir();
    for (let run = 0; run < 2; run++) {
      const r = await runCli(['doctor', '--json', '--data-dir', dir]);
      expect(r.code).toBe(1);
      const checks = json(r).checks as { id: string; status: string; message: string; hint?: string }[];
      expect(checks.find((c) => c.id === 'database')).toMatchObject({
        status: 'fail',
        message: expect.stringContaining('does not exist'),
        hint: expect.stringContaining(`gatehouse init --data-dir ${dir}`),
      });
      expect(contents(dir)).toEqual([]);
    }
  });

  it('when doctor runs without --data-dir in a directory that is not an install, then no ./data appears there', () => {
    const cwd = tempDir();
    const r = spawnSync(process.execPath, [BIN, 'doctor'], { cwd, env: cliEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`gatehouse init --data-dir ${path.join(cwd, 'data')}`);
    expect(contents(cwd)).toEqual([]);
  });

  it('when user create or sessions list is refused for want of a database, or migrate --dry-run plans, then no SQLite file is left', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'sub'));
    const created = await runCli(['user', 'create', '--type', 'customer', '--email', 'x@example.test', '--data-dir', dir]);
    expect(created.code).toBe(1);
    expect(created.stderr).toContain(`error: no Gatehouse database at ${path.join(dir, 'gatehouse.sqlite')}`);
    expect(created.stderr).toContain(`hint: set it up with gatehouse init --data-dir ${dir}`);
    for (const args of [['sessions', 'list', '--user', 'x@example.test'], ['migrate', '--status'], ['backup']]) {
      expect((await runCli([...args, '--data-dir', dir])).code).toBe(1);
    }
    // A dry run plans against an empty database in memory.
    const dry = await runCli(['migrate', '--dry-run', '--json', '--data-dir', dir]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(json(dry).pending.length).toBeGreaterThan(3);
    expect(contents(dir)).toEqual(['sub']);
  });
});
