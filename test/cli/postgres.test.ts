import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropRedisPrefix, uniqueTestName } from '../helpers/backend.js';
import { json, removeTempDirs, runCli, stopStartedClis, tempDir } from '../helpers/cli.js';
import { backupRoundTrip } from './backup-roundtrip.js';

// Runs only with the PostgreSQL + Redis tier (vitest.config.ts leaves it out otherwise).
const ADMIN_URL = process.env.TEST_DATABASE_URL!;
const REDIS_URL = process.env.TEST_REDIS_URL!;

describe('gatehouse init on PostgreSQL and Redis', () => {
  const name = uniqueTestName('gh_cli');
  // The servers this file starts share the test Redis: keys under a prefix of this file's own.
  const redisPrefix = `ght:${name}:`;
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
    await dropRedisPrefix(REDIS_URL, redisPrefix);
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
    for (const id of ['database', 'redis', 'migrations', 'search-index', 'session-backlog']) expect(checks.find((x) => x.id === id)?.status, id).toBe('ok');
    expect(checks.find((x) => x.id === 'search-index')!.message).toMatch(
      /^pg_trgm [\d.]+; trigram index on email, name, last_name, user_name \(users.search_text\)$/,
    );
    expect(checks.find((x) => x.id === 'database')!.message).toContain(`PostgreSQL at ${dbUrl}`);
  });

  it('when a populated PostgreSQL instance is backed up with pg_dump, changed and restored, then it is as at the backup', async () => {
    try {
      await backupRoundTrip(dir, { REDIS_PREFIX: redisPrefix });
    } finally {
      await stopStartedClis();
    }
  });

  it('when pg_dump is not installed, then backup fails in one line naming the package to install', async () => {
    const r = await runCli(['backup', '--data-dir', dir], { env: { REDIS_PREFIX: redisPrefix, PATH: '/nonexistent-bin' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: pg_dump is not installed (Debian/Ubuntu package: postgresql-client)');
    expect(r.stderr).toContain('hint: install it: apt-get install -y postgresql-client');
  });
});
