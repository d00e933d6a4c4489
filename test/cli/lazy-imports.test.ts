import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { provisionPg, type ProvisionedBackend } from '../helpers/backend.js';
import { LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

/*
 * What a process loads is what it uses: the passkey library at the first ceremony, node-redis when
 * REDIS_URL is set, the one database driver in use (modules/passkeys/webauthn.ts,
 * src/cache/redis-client.ts, src/data/sequelize.ts). Each of them is a tenth of a second or more of
 * every start, and a static import anywhere would bring it back silently: these tests watch the
 * packages a real `gatehouse` process resolves, through a module resolution hook (node:module
 * register, loaded with NODE_OPTIONS=--import).
 */

afterAll(removeTempDirs);
afterEach(stopStartedClis);

const PACKAGES = { passkeys: '@simplewebauthn/server', redis: 'redis', pg: 'pg', sqlite3: 'sqlite3' } as const;
type Package = keyof typeof PACKAGES;

let hookDir: string;

beforeAll(() => {
  hookDir = tempDir('gh-lazy-hook-');
  // The hook runs on the loader's own thread: it appends each resolved URL to the file the process names.
  writeFileSync(
    path.join(hookDir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (process.env.GH_LOAD_LOG) appendFileSync(process.env.GH_LOAD_LOG, r.url + '\\n');
  return r;
}
`,
  );
  writeFileSync(
    path.join(hookDir, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(path.join(hookDir, 'hooks.mjs')).href)});\n`,
  );
});

/** Env for a gatehouse process whose resolved modules go to a fresh log; `loaded()` reads which of PACKAGES it resolved. */
function watched(name: string) {
  const log = path.join(hookDir, `${name}.log`);
  writeFileSync(log, '');
  const env = { NODE_OPTIONS: `--import ${pathToFileURL(path.join(hookDir, 'register.mjs')).href}`, GH_LOAD_LOG: log };
  const loaded = (): Package[] => {
    const urls = readFileSync(log, 'utf8').split('\n');
    return (Object.keys(PACKAGES) as Package[]).filter((p) => urls.some((u) => u.includes(`/node_modules/${PACKAGES[p]}/`)));
  };
  return { env, loaded };
}

async function serveUntilHealthy(args: string[], env: Record<string, string>): Promise<void> {
  const s = startCli(['serve', '--port', '0', ...args], { env });
  const url = (await s.waitFor(LISTENING))[1];
  const health = await fetch(`${url}/health`, { signal: AbortSignal.timeout(15_000) });
  expect(health.status).toBe(200);
  s.child.kill('SIGTERM');
  expect(await s.exited).toEqual({ code: 0, signal: null });
}

describe('what a gatehouse process loads', () => {
  it('when --help is asked for, then no database driver, Redis client or passkey library is loaded', async () => {
    const w = watched('help');
    const r = await runCli(['--help'], { env: w.env });
    expect(r.code, r.stderr).toBe(0);
    expect(w.loaded()).toEqual([]);
  });

  it('when serve runs on the embedded default with passkeys installed, then it loads sqlite3 only; the passkey library comes with the first ceremony', async () => {
    const dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
    const install = await runCli(['module', 'install', 'passkeys', '--yes', '--data-dir', dir]);
    expect(install.code, install.stderr).toBe(0);

    const w = watched('serve-sqlite');
    await serveUntilHealthy(['--data-dir', dir], w.env);
    expect(w.loaded()).toEqual(['sqlite3']);

    const ceremony = watched('serve-sqlite-passkey');
    const s = startCli(['serve', '--port', '0', '--data-dir', dir], { env: ceremony.env });
    const url = (await s.waitFor(LISTENING))[1];
    const r = await fetch(`${url}/auth/passkeys/login/options`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { options: { challenge: string } }).options.challenge).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(ceremony.loaded()).toEqual(['passkeys', 'sqlite3']);
  });
});

// With the PostgreSQL + Redis tier (TEST_DATABASE_URL, TEST_REDIS_URL), as CI runs it.
describe.runIf(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)('what a gatehouse process loads on PostgreSQL and Redis', () => {
  let backend: ProvisionedBackend;

  beforeAll(async () => {
    backend = await provisionPg();
  });

  afterAll(() => backend?.drop());

  it('when serve runs with DATABASE_URL and REDIS_URL, then it loads pg and node-redis, and not sqlite3', async () => {
    const dir = tempDir();
    const { DATABASE_URL, REDIS_URL, REDIS_PREFIX } = backend.env;
    const env = { REDIS_PREFIX };
    const init = await runCli(['init', '--no-prompt', '--data-dir', dir, '--database-url', DATABASE_URL, '--redis-url', REDIS_URL], { env });
    expect(init.code, init.stderr).toBe(0);
    const w = watched('serve-pg');
    await serveUntilHealthy(['--data-dir', dir], { ...env, ...w.env });
    expect(w.loaded()).toEqual(['redis', 'pg']);
  });
});
