import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAppContext } from '../src/app-context.js';
import { registry } from '../modules/index.js';
import { coreRoutes } from '../src/http/routes/index.js';
import { loadConfig } from '../src/config/load-config.js';
import { createLogger } from '../src/log/logger.js';
import type { BenchBackend } from './backend.js';

export const BENCH_PASSWORD = 'Bench-Pass-7319-Quokka';
export const BENCH_BRIDGE_SECRET = 'bench-bridge-secret-0123456789abcdef';

export interface Prepared {
  dataDir: string;
  /** Environment for every Gatehouse process of the run. */
  env: Record<string, string | undefined>;
  /** argv (after `node`) that runs the real CLI. */
  cli: string[];
  /** How the data dir was set up: the CLI's init, or (while it does not work) migrations applied directly. */
  initVia: 'cli' | 'direct';
  initNote: string | null;
  bcryptRounds: number;
  emails: string[];
}

/** The CLI entry: bin/gatehouse when present, else the compiled entry it loads. */
export function cliEntry(root: string): string[] {
  const bin = path.join(root, 'bin', 'gatehouse');
  if (existsSync(bin)) return [bin];
  for (const p of ['dist/entry/cli.js']) if (existsSync(path.join(root, p))) return [path.join(root, p)];
  throw new Error('no CLI entry found: build first (npm run build)');
}

/**
 * A data dir initialised with `gatehouse init`, the schema in place, and `users` benchmark users
 * created directly (one bcrypt hash at the configured cost, shared by all of them).
 */
export async function prepare(root: string, backend: BenchBackend, users: number): Promise<Prepared> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-'));
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'production',
    GATEHOUSE_DATA_DIR: dataDir,
    DATABASE_URL: backend.databaseUrl,
    REDIS_URL: backend.redisUrl,
    REDIS_PREFIX: backend.redisPrefix,
    BRIDGE_VALIDATION_SECRET: BENCH_BRIDGE_SECRET,
    RATE_LIMITS_ENABLED: 'false',
    LOG_LEVEL: 'info', // the default: access lines only for non-2xx and slow answers
    HOST: '127.0.0.1',
  };
  const cli = cliEntry(root);
  const init = spawnSync(
    process.execPath,
    [...cli, 'init', '--no-prompt', '--yes', '--data-dir', dataDir, '--database-url', backend.databaseUrl, '--redis-url', backend.redisUrl],
    { cwd: root, env: env as NodeJS.ProcessEnv, encoding: 'utf8', timeout: 120_000 },
  );
  const initVia = init.status === 0 ? 'cli' : 'direct';
  const initNote =
    init.status === 0 ? null : `gatehouse init failed (exit ${init.status ?? init.signal}): ${(init.stderr || init.stdout || '').trim().slice(-600)}`;

  const config = loadConfig({ env, cwd: root });
  const app = await createAppContext(config, { logger: createLogger('warn'), moduleRegistry: registry, coreRoutes });
  try {
    await app.migrator.apply(); // nothing pending after a working init; the whole schema otherwise
    await app.modules.reload();
    const hash = await app.services.passwords.hash(BENCH_PASSWORD);
    const emails: string[] = [];
    for (let i = 0; i < users; i++) {
      const email = `bench${i}@bench.example.test`;
      await app.repos.users.create({
        id: randomUUID(),
        email,
        name: 'Bench',
        last_name: `User ${i}`,
        user_type: 'customer',
        is_verified: true,
        password_hash: hash,
      });
      emails.push(email);
    }
    return { dataDir, env, cli, initVia, initNote, bcryptRounds: config.bcryptRounds, emails };
  } finally {
    await app.close();
  }
}
