import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createAppContext, type AppContext } from '../../src/app-context.js';
import { registry } from '../../modules/index.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { loadConfig } from '../../src/config/load-config.js';
import { moduleEnvNames } from '../../src/modules/module-env.js';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log/logger.js';
import { BACKEND, provisionPg, type ProvisionedBackend } from './backend.js';

export const TEST_BRIDGE_SECRET = 'test-bridge-secret-0123456789-abcdefghij';

/** Settings every test app starts from; limits are high so only the limit tests meet them. */
export const TEST_ENV: Record<string, string> = {
  BCRYPT_ROUNDS: '4',
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  JOBS_ENABLED: 'false',
  BRIDGE_VALIDATION_SECRET: TEST_BRIDGE_SECRET,
  COOKIE_SECRET: 'test-cookie-secret-0123456789',
  HOST: '127.0.0.1',
  PORT: '0',
  RATE_LIMIT_DEFAULT: '100000/1m',
  RATE_LIMIT_LOGIN: '100000/1m',
  RATE_LIMIT_REGISTRATION: '100000/1m',
  RATE_LIMIT_TOKEN_LOGIN: '100000/1m',
  RATE_LIMIT_TOKEN_VALIDATE: '100000/1m',
  RATE_LIMIT_EMAIL_CHANGE: '100000/1m',
  RATE_LIMIT_SOCIAL_LOGIN: '100000/1m',
  RATE_LIMIT_SOCIAL_API: '100000/1m',
  RATE_LIMIT_CACHE_INVALIDATION: '100000/1m',
  RATE_LIMIT_ADMIN: '100000/1m',
  RATE_LIMIT_BRIDGE: '100000/1m',
  RATE_LIMIT_BRIDGE_INVALID: '100000/1m',
  RATE_LIMIT_SESSION: '100000/1m',
  RATE_LIMIT_TWO_FACTOR: '100000/1m',
  RATE_LIMIT_OIDC_AUTHORIZATION: '100000/1m',
  RATE_LIMIT_OIDC_TOKEN: '100000/1m',
  RATE_LIMIT_OIDC_CLIENT_AUTH: '100000/1m',
};

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as X-Session-ID. */
  session?: string;
  bridge?: boolean;
  headers?: Record<string, string>;
  /** Raw body (sent as is, with the given headers). */
  raw?: string | Buffer | FormData;
}

export interface TestApp {
  url: string;
  app: AppContext;
  server: RunningServer;
  env: Record<string, string>;
  dataDir: string;
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<TestResponse<T>>;
  close(): Promise<void>;
}

export interface StartTestAppOptions {
  env?: Record<string, string>;
  /** Start a second instance on the same database, data dir and Redis as this one. */
  sharing?: TestApp;
  /** Where the app's log lines go (see captureLog); default stdout at the configured level. */
  logTo?: NodeJS.WritableStream;
  /** The services' notion of now (sessions, tokens), for tests that move time. */
  clock?: () => Date;
  /** A certificate (PEM) the OpenID provider's outbound fetches trust (a self-signed https server of the test). */
  outboundCa?: string;
}

/** A log destination that keeps every line, for tests that read what the app logged. */
export function captureLog(): { stream: Writable; text(): string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  return { stream, text: () => text };
}

/**
 * The real app on port 0 over real HTTP, on the backend of this test run: a temp data dir with
 * SQLite, or a fresh PostgreSQL database and Redis prefix. Migrations are applied.
 */
export async function startTestApp(opts: StartTestAppOptions = {}): Promise<TestApp> {
  let provisioned: ProvisionedBackend | null = null;
  let dataDir: string;
  let env: Record<string, string>;
  if (opts.sharing) {
    dataDir = opts.sharing.dataDir;
    env = { ...opts.sharing.env, ...opts.env };
  } else {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-test-'));
    if (BACKEND === 'pg') provisioned = await provisionPg();
    env = { ...TEST_ENV, GATEHOUSE_DATA_DIR: dataDir, ...(provisioned?.env ?? {}), ...opts.env };
  }
  const config = loadConfig({ env, skipFile: true, moduleEnv: moduleEnvNames(registry) });
  const app = await createAppContext(config, {
    logger: createLogger(config.logLevel, opts.logTo),
    clock: opts.clock,
    moduleRegistry: registry,
    coreRoutes,
    outboundCa: opts.outboundCa,
  });
  await app.migrator.apply();
  await app.modules.reload();
  const server = await startServer(app, { port: 0, host: '127.0.0.1' });
  const url = server.url;

  async function request<T>(method: string, p: string, o: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.session) headers['X-Session-ID'] = o.session;
    if (o.bridge) headers['X-Bridge-Secret'] = TEST_BRIDGE_SECRET;
    let body: string | Buffer | FormData | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const res = await fetch(url + p, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  return {
    url,
    app,
    server,
    env,
    dataDir,
    request,
    async close() {
      await server.close(1000, { acceptMs: 0 });
      await app.close();
      if (provisioned) await provisioned.drop();
      if (!opts.sharing) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
