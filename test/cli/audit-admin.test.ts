import path from 'node:path';
import sqlite3 from 'sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, removeTempDirs, runCli, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);

interface Row {
  type: string;
  actor_id: string | null;
  actor_type: string | null;
  actor_via: string | null;
  user_id: string | null;
  ip: string | null;
  request_id: string | null;
  details: string;
}

/** The data dir's events, oldest first, as another process reads them. */
function events(dir: string): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(path.join(dir, 'gatehouse.sqlite'), sqlite3.OPEN_READONLY);
    db.all('SELECT type, actor_id, actor_type, actor_via, user_id, ip, request_id, details FROM audit_events ORDER BY id', (err, rows) =>
      db.close(() => (err ? reject(err) : resolve(rows as Row[]))),
    );
  });
}

describe('account and module events from the CLI', () => {
  let dir: string;
  const cli = (...args: string[]) => runCli([...args, '--data-dir', dir]);
  beforeAll(async () => {
    dir = tempDir();
    const r = await runCli(['init', '--yes', '--data-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('when the operator creates a user and installs, switches and uninstalls a module, then each, and the event of a module command, is recorded with the CLI as actor', async () => {
    const created = await cli('user', 'create', '--json', '--email', 'cli.made@example.com', '--type', 'writer', '--name', 'Clio');
    expect(created.code, created.stderr).toBe(0);
    const user = json(created);
    for (const step of [
      ['module', 'install', 'ext-business', '--yes', '--json'],
      ['module', 'disable', 'ext-business', '--json'],
      ['module', 'enable', 'ext-business', '--json'],
      ['module', 'uninstall', 'ext-business', '--yes', '--json'],
    ]) {
      const r = await cli(...step);
      expect(r.code, `${step.join(' ')}: ${r.stderr}`).toBe(0);
    }

    const rows = await events(dir);
    const cliRows = rows.filter((r) => (r.type === 'user.created' ? r.user_id === user.id : r.type.startsWith('module.')));
    expect(cliRows.map((r) => [r.type, JSON.parse(r.details)])).toEqual([
      ['user.created', { via: 'cli', user_type: 'writer' }],
      ['module.installed', { module: 'ext-business', version: '1.0.0' }],
      ['module.toggled', { module: 'ext-business', enabled: false }],
      ['module.toggled', { module: 'ext-business', enabled: true }],
      ['module.uninstalled', { module: 'ext-business', version: '1.0.0', data_kept: true }],
    ]);
    for (const r of cliRows) expect(r).toMatchObject({ actor_id: null, actor_type: null, actor_via: 'cli', ip: null, request_id: null });
    // A module's own event from its command (`module exec`): the CLI is its actor too.
    expect((await cli('module', 'install', 'privacy', '--yes', '--json')).code).toBe(0);
    const exported = await cli('module', 'exec', 'privacy:export', 'cli.made@example.com', '--json');
    expect(exported.code, exported.stderr).toBe(0);
    const exportRow = (await events(dir)).find((r) => r.type === 'privacy.export_requested');
    expect(exportRow).toMatchObject({ user_id: user.id, actor_via: 'cli', actor_id: null, ip: null });
    expect(JSON.parse(exportRow!.details)).toEqual({ by: 'system' });

    // Neither the address, the name nor the generated password is in the record.
    const all = JSON.stringify(await events(dir));
    for (const v of ['cli.made@example.com', 'Clio', user.password]) expect(all).not.toContain(v);
  });
});
