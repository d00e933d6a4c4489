import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createClient } from 'redis';

/** Which backend the integration tier runs on: `sqlite` (embedded) or `pg` (PostgreSQL + Redis). */
export const BACKEND = (process.env.GATEHOUSE_TEST_BACKEND ?? 'sqlite') as 'sqlite' | 'pg';

/**
 * Redis for the tests that need a real one. Only the PostgreSQL + Redis tier has it: the default run
 * (`npm test` without TEST_DATABASE_URL / TEST_REDIS_URL) must pass with no server running.
 */
export const TEST_REDIS_URL: string | undefined = BACKEND === 'pg' ? process.env.TEST_REDIS_URL : undefined;

/**
 * Names of databases and Redis prefixes created by tests: `<kind>_<run>_<random>`, where the run id
 * (TEST_RUN_ID, set by .ci/run) lets a CI run drop exactly its own leftovers on a shared server.
 */
export function uniqueTestName(kind: 'gh_t' | 'gh_cli'): string {
  const run = (process.env.TEST_RUN_ID ?? '')
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(0, 16);
  return `${kind}_${run ? `${run}_` : ''}${randomBytes(6).toString('hex')}`;
}

/** Deletes the keys under `prefix` (only those: other jobs share this Redis). */
export async function dropRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const r = createClient({ url: redisUrl });
  await r.connect();
  for await (const keys of r.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
    if (keys.length) await r.del(keys);
  }
  await r.quit();
}

export interface ProvisionedBackend {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** A fresh PostgreSQL database and Redis key prefix of its own, so test files run in parallel. */
export async function provisionPg(): Promise<ProvisionedBackend> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!adminUrl || !redisUrl) throw new Error('GATEHOUSE_TEST_BACKEND=pg needs TEST_DATABASE_URL and TEST_REDIS_URL');
  const name = uniqueTestName('gh_t');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const prefix = `ght:${name}:`;
  return {
    env: { DATABASE_URL: url.toString(), REDIS_URL: redisUrl, REDIS_PREFIX: prefix },
    async drop() {
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
      await dropRedisPrefix(redisUrl, prefix);
    },
  };
}
