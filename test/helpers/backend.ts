import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createClient } from 'redis';

/** Which backend the integration tier runs on: `sqlite` (embedded) or `pg` (PostgreSQL + Redis). */
export const BACKEND = (process.env.GATEHOUSE_TEST_BACKEND ?? 'sqlite') as 'sqlite' | 'pg';

export interface ProvisionedBackend {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** A fresh PostgreSQL database and Redis key prefix of its own, so test files run in parallel. */
export async function provisionPg(): Promise<ProvisionedBackend> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!adminUrl || !redisUrl) throw new Error('GATEHOUSE_TEST_BACKEND=pg needs TEST_DATABASE_URL and TEST_REDIS_URL');
  const name = `gh_t_${randomBytes(6).toString('hex')}`;
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
      const r = createClient({ url: redisUrl });
      await r.connect();
      for await (const keys of r.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
        if (keys.length) await r.del(keys);
      }
      await r.quit();
    },
  };
}
