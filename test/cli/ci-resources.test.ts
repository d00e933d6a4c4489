import { execFileSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

// Runs with the PostgreSQL + Redis tier only (vitest.config.ts): it creates databases on that server.
const ADMIN_URL = process.env.TEST_DATABASE_URL!;
const REDIS_URL = process.env.TEST_REDIS_URL!;
const SCRIPT = path.join(ROOT, '.ci', 'test-resources.sh');
const sh = (cmd: string) => execFileSync('bash', ['-c', `. '${SCRIPT}'; ${cmd}`], { encoding: 'utf8' });

const mine = sh('ci_run_id');
const other = sh('ci_run_id');
const created: string[] = [];

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const existing = (names: string[]) =>
  admin(async (c) => (await c.query('SELECT datname FROM pg_database WHERE datname = ANY($1)', [names])).rows.map((r) => r.datname as string));

afterAll(async () => {
  // What stood for another job's data is this test's own: drop it now.
  await admin(async (c) => {
    for (const d of created) await c.query(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`);
  });
  const r = createClient({ url: REDIS_URL });
  await r.connect();
  await r.del([`ght:gh_t_${other}_x:k`, `ght:gh_t_${mine}_x:k`]);
  await r.quit();
});

describe('.ci/run on a shared server', () => {
  it('when run ids are made, then they are distinct and fit database names', () => {
    expect(mine).toMatch(/^ci[0-9a-f]{8}$/);
    expect(other).not.toBe(mine);
  });

  it("when a run cleans up, then it drops its own databases and Redis keys and leaves another run's alone", async () => {
    const own = [`gh_ci_${mine}`, `gh_t_${mine}_aa`, `gh_cli_${mine}_bb`];
    const theirs = [`gh_ci_${other}`, `gh_t_${other}_aa`, `gh_cli_${other}_bb`, `gh_t_${mine}x_cc`];
    await admin(async (c) => {
      for (const d of [...own, ...theirs]) {
        await c.query(`CREATE DATABASE ${d}`);
        created.push(d);
      }
    });
    const r = createClient({ url: REDIS_URL });
    await r.connect();
    await r.set(`ght:gh_t_${mine}_x:k`, '1');
    await r.set(`ght:gh_t_${other}_x:k`, '1');

    sh(`ci_drop_own ${mine}`);

    expect(await existing(own)).toEqual([]);
    expect((await existing(theirs)).sort()).toEqual([...theirs].sort());
    expect(await r.get(`ght:gh_t_${mine}_x:k`)).toBeNull();
    expect(await r.get(`ght:gh_t_${other}_x:k`)).toBe('1');
    await r.quit();
  });

  it('when the run id is not a plain name, then nothing is dropped', () => {
    expect(() => sh("ci_drop_own '%'")).toThrow();
  });
});
