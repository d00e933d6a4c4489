import path from 'node:path';
import sqlite3 from 'sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQLITE_FILE } from '../../src/data/sequelize.js';
import { json, removeTempDirs, runCli, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);

function sql(dir: string, query: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(path.join(dir, SQLITE_FILE));
    db.all(query, params, (err, rows) => {
      db.close();
      if (err) reject(err);
      else resolve(rows as Record<string, unknown>[]);
    });
  });
}

describe('gatehouse user two-factor reset', () => {
  let dir: string;
  const cli = (...args: string[]) => runCli([...args, '--data-dir', dir]);

  beforeAll(async () => {
    dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
    expect((await cli('user', 'create', '--email', 'tfa@example.com', '--type', 'customer')).code).toBe(0);
  });

  it('when the module is not installed, then it says so and exits non-zero', async () => {
    const r = await cli('user', 'two-factor', 'reset', '--email', 'tfa@example.com');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/two-factor module is not installed/);
  });

  it("when installed, then it turns the user's two-factor off and removes their methods; an unknown email fails", async () => {
    expect((await cli('module', 'install', 'two-factor', '--yes')).code).toBe(0);
    const [user] = await sql(dir, 'SELECT id FROM users WHERE email = ?', ['tfa@example.com']);
    await sql(dir, 'UPDATE users SET two_factor = 1 WHERE id = ?', [user.id]);
    await sql(
      dir,
      "INSERT INTO two_factor_methods (id, user_id, kind, status, identifier, created_at) VALUES ('m-1', ?, 'email', 'active', 'tfa@example.com', '2026-01-01 00:00:00.000 +00:00')",
      [user.id],
    );
    const r = json(await cli('user', 'two-factor', 'reset', '--email', 'tfa@example.com', '--json'));
    expect(r).toMatchObject({ success: true, result: { user_id: user.id, two_factor_enabled: false, methods_removed: 1 } });
    expect(await sql(dir, 'SELECT two_factor FROM users WHERE id = ?', [user.id])).toEqual([{ two_factor: 0 }]);
    expect(await sql(dir, 'SELECT id FROM two_factor_methods')).toEqual([]);
    const unknown = await cli('user', 'two-factor', 'reset', '--email', 'nobody@example.com');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/no user with email/);
  });
});
