import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import { dropRedisPrefix, uniqueTestName } from '../helpers/backend.js';
import { LISTENING, ROOT, runCli, startCli, tempDir, type RunningCli } from '../helpers/cli.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/** The fault tier runs on SQLite always, and on PostgreSQL + Redis when the suite has them. */
export const BACKENDS: ('sqlite' | 'pg')[] = process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL ? ['sqlite', 'pg'] : ['sqlite'];
export const ALL_MODULES = ['ext-business', 'onboarding', 'privacy', 'two-factor', 'blog', 'post-types'];
export const ADMIN = { email: 'admin@example.com', password: 'Fault-tier password 1!' };

/**
 * One installed instance with every module, on either backend. On PostgreSQL the database is
 * reached through a TCP relay the test cuts (the shared server other jobs use stays up) and Redis is
 * a server of the test's own, which it may kill. On SQLite "down" is another process holding an
 * exclusive lock on the file, as a backup tool or a `sqlite3` shell would.
 */
export interface FaultBackend {
  kind: 'sqlite' | 'pg';
  dir: string;
  env: Record<string, string>;
  /** Takes the database away (until `databaseUp`). */
  databaseDown(): Promise<void>;
  databaseUp(): Promise<void>;
  redis: OwnRedis | null;
  drop(): Promise<void>;
}

export async function installBackend(kind: 'sqlite' | 'pg'): Promise<FaultBackend> {
  const dir = tempDir('gh-fault-');
  const env: Record<string, string> = {};
  let proxy: TcpProxy | null = null;
  let redis: OwnRedis | null = null;
  let name = '';
  if (kind === 'pg') {
    name = uniqueTestName('gh_cli');
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const target = new URL(process.env.TEST_DATABASE_URL!);
    proxy = await startTcpProxy(Number(target.port || 5432), target.hostname);
    const viaProxy = new URL(target);
    viaProxy.port = String(proxy.port);
    viaProxy.pathname = `/${name}`;
    redis = await startOwnRedis();
    env.DATABASE_URL = viaProxy.toString();
    env.REDIS_URL = redis.url;
    env.REDIS_PREFIX = `ght:${name}:`;
  }
  const init = await runCli(['init', '--yes', '--no-prompt', '--data-dir', dir, '--admin-email', ADMIN.email, '--admin-password-stdin'], {
    env,
    input: ADMIN.password,
  });
  expect(init.code, init.stderr).toBe(0);
  const install = await runCli(['module', 'install', ...ALL_MODULES, '--data-dir', dir], { env, timeoutMs: 120_000 });
  expect(install.code, install.stderr + install.stdout).toBe(0);

  let locker: ChildProcess | null = null;
  return {
    kind,
    dir,
    env,
    redis,
    async databaseDown() {
      if (proxy) return proxy.cut();
      locker = await lockSqlite(path.join(dir, 'gatehouse.sqlite'));
    },
    async databaseUp() {
      if (proxy) return proxy.restore();
      const l = locker;
      locker = null;
      if (!l || l.exitCode !== null) return;
      const gone = new Promise((r) => l.once('exit', r));
      l.stdin?.end();
      await gone;
    },
    async drop() {
      locker?.kill('SIGKILL');
      await proxy?.close();
      await redis?.close();
      if (kind !== 'pg') return;
      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
      await dropRedisPrefix(process.env.TEST_REDIS_URL!, `ght:${name}:`);
    },
  };
}

/** Another process that holds an exclusive lock on the SQLite file (readers and writers wait) until its stdin closes. */
async function lockSqlite(file: string): Promise<ChildProcess> {
  const script = `
    const sqlite3 = require(${JSON.stringify(path.join(ROOT, 'node_modules', 'sqlite3'))});
    const db = new sqlite3.Database(process.argv[1]);
    db.configure('busyTimeout', 10000);
    db.exec('PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS fault_lock(x); INSERT INTO fault_lock VALUES (1);', (err) => {
      if (err) { console.error(err.message); process.exit(1); }
      console.log('locked');
      process.stdin.resume();
      process.stdin.on('end', () => db.exec('ROLLBACK', () => db.close(() => process.exit(0))));
    });`;
  const child = spawn(process.execPath, ['-e', script, file], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => String(d).includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`sqlite locker exited with ${code}`)));
  });
  return child;
}

export async function serve(b: FaultBackend, env: Record<string, string> = {}, args: string[] = []): Promise<{ s: RunningCli; url: string }> {
  const s = startCli(['serve', '--port', '0', '--data-dir', b.dir, ...args], { env: { ...b.env, ...env } });
  const url = (await s.waitFor(LISTENING))[1];
  return { s, url };
}

export interface Answer {
  status: number;
  retryAfter: string | null;
  body: string;
}

/** One request on a fresh connection; a connection error resolves as status 0 with the error code. */
export function request(url: string, method: string, p: string, opts: { session?: string; body?: unknown; timeoutMs?: number } = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = http.request(
      url + p,
      {
        method,
        agent: false,
        headers: { ...(opts.session ? { 'X-Session-ID': opts.session } : {}), ...(body ? { 'Content-Type': 'application/json' } : {}) },
        timeout: opts.timeoutMs ?? 60_000,
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: (res.headers['retry-after'] as string) ?? null, body: text }));
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ status: 0, retryAfter: null, body: e.code ?? e.message }));
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ status: 0, retryAfter: null, body: e.code ?? e.message }));
    req.end(body);
  });
}

export async function login(url: string): Promise<string> {
  const r = await request(url, 'POST', '/auth/login', { body: ADMIN });
  expect(r.status, r.body).toBe(200);
  return (JSON.parse(r.body) as { session_id: string }).session_id;
}

/** Tallies answers by status (0: the connection failed, keyed by its error code). */
export class Tally {
  readonly counts = new Map<string, number>();
  add(a: Answer): void {
    const key = a.status === 0 ? `error:${a.body}` : String(a.status);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  get total(): number {
    return [...this.counts.values()].reduce((x, y) => x + y, 0);
  }
  toJSON(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort());
  }
}

/**
 * Bounded load: `workers` loops each sending one request after another (`pick` chooses it) until
 * `until()` says stop; every answer is checked by `check` and tallied.
 */
export async function load(
  workers: number,
  until: () => boolean,
  pick: (i: number) => Promise<Answer>,
  tally: Tally,
  check: (a: Answer) => void = () => undefined,
): Promise<void> {
  let n = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!until() && n < 20_000) {
        const a = await pick(n++);
        tally.add(a);
        check(a);
        await new Promise((r) => setTimeout(r, 20));
      }
    }),
  );
}

/** Polls until `fn` resolves true; returns the milliseconds it took. */
export async function timeUntil(fn: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  await expect.poll(fn, { timeout: timeoutMs, message: `not within ${timeoutMs} ms` }).toBe(true);
  return Date.now() - started;
}

/** Log lines of a level (pino's numbers: 50 error, 40 warn) from a JSON log. */
export function logLines(text: string, level: number): { msg: string }[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((l) => l.level === level);
}
