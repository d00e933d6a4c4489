import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, removeTempDirs, runCli, tempDir } from '../helpers/cli.js';

// This machine always has PostgreSQL and Redis; CI points TEST_DATABASE_URL at its own database.
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('gatehouse init on PostgreSQL and Redis', () => {
  const name = `gh_cli_${randomBytes(5).toString('hex')}`;
  let dbUrl: string;
  let dir: string;

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(ADMIN_URL);
    u.pathname = `/${name}`;
    dbUrl = u.toString();
    dir = tempDir();
  });

  afterAll(async () => {
    removeTempDirs();
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  it('when init gets --database-url and --redis-url, then it writes them, creates the schema there, and doctor is green', async () => {
    const init = await runCli(['init', '--no-prompt', '--data-dir', dir, '--database-url', dbUrl, '--redis-url', REDIS_URL, '--json']);
    expect(init.code, init.stderr).toBe(0);
    expect(json(init).migrations_applied.length).toBeGreaterThanOrEqual(3);
    const written = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
    expect(written).toMatchObject({ DATABASE_URL: dbUrl, REDIS_URL: REDIS_URL });
    expect(init.stderr).toMatch(/✔ Database reachable \(PostgreSQL at /);
    expect(init.stderr).toMatch(/✔ Redis reachable/);

    const c = new pg.Client({ connectionString: dbUrl });
    await c.connect();
    const { rows } = await c.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name IN ('users', 'sessions')");
    await c.end();
    expect(rows[0].n).toBe(2);

    const doctor = await runCli(['doctor', '--json', '--data-dir', dir]);
    expect(doctor.code, doctor.stdout).toBe(0);
    const checks = json(doctor).checks as { id: string; status: string; message: string }[];
    for (const id of ['database', 'redis', 'migrations']) expect(checks.find((x) => x.id === id)?.status, id).toBe('ok');
    expect(checks.find((x) => x.id === 'database')!.message).toContain(`PostgreSQL at ${dbUrl}`);
  });
});
