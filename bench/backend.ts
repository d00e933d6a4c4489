import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createClient } from 'redis';

export const DEFAULT_ADMIN_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export interface BenchBackend {
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  /** True when the database was created for this run (and is dropped by `release`). */
  created: boolean;
  release(): Promise<void>;
}

/**
 * PostgreSQL and Redis for one run: BENCH_DATABASE_URL as given, or a fresh database on the local
 * server; BENCH_REDIS_URL or the local Redis, always under a prefix of its own.
 */
export async function provisionBackend(env: NodeJS.ProcessEnv): Promise<BenchBackend> {
  const tag = randomBytes(5).toString('hex');
  const redisUrl = env.BENCH_REDIS_URL || DEFAULT_REDIS_URL;
  const redisPrefix = `ghbench:${tag}:`;
  let databaseUrl = env.BENCH_DATABASE_URL;
  let dropDatabase: (() => Promise<void>) | null = null;
  if (!databaseUrl) {
    const name = `gh_bench_${tag}`;
    await withPg(DEFAULT_ADMIN_DATABASE_URL, (c) => c.query(`CREATE DATABASE ${name}`));
    const u = new URL(DEFAULT_ADMIN_DATABASE_URL);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    dropDatabase = () => withPg(DEFAULT_ADMIN_DATABASE_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
  return {
    databaseUrl,
    redisUrl,
    redisPrefix,
    created: dropDatabase !== null,
    async release() {
      await dropDatabase?.();
      await deleteRedisKeys(redisUrl, redisPrefix);
    },
  };
}

async function withPg(url: string, fn: (c: pg.Client) => Promise<unknown>): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await fn(c);
  } finally {
    await c.end();
  }
}

async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const r = createClient({ url });
  await r.connect();
  try {
    for await (const keys of r.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
      if (keys.length) await r.del(keys);
    }
  } finally {
    await r.quit();
  }
}
