import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app-context.js';
import { registry } from '../../modules/index.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log/logger.js';
import { json, removeTempDirs, runCli, tempDir, type CliResult } from '../helpers/cli.js';
import { startOwnRedis } from '../helpers/redis-server.js';

afterAll(removeTempDirs);

const readConfig = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
const modeOf = (file: string) => statSync(file).mode & 0o777;

/** What the schema holds, read through the app itself (the CLI must have left it consistent). */
async function inspect(dir: string, email: string, password?: string) {
  const config = loadConfig({ env: { GATEHOUSE_DATA_DIR: dir, BCRYPT_ROUNDS: '4', LOG_LEVEL: 'silent' } });
  const app = await createAppContext(config, { logger: createLogger('silent'), moduleRegistry: registry, coreRoutes });
  try {
    const pending = await app.migrator.plan();
    const user = await app.repos.users.findByEmail(email);
    const passwordOk = user && password !== undefined ? await app.services.passwords.verify(password, user.password_hash) : null;
    return { pending: pending.length, user, passwordOk };
  } finally {
    await app.close();
  }
}

describe('gatehouse init --yes on a fresh data dir', () => {
  let dir: string;
  let first: CliResult;

  beforeAll(async () => {
    dir = path.join(tempDir(), 'data');
    first = await runCli(['init', '--yes', '--data-dir', dir]);
  });

  it('when it finishes, then config.json exists with mode 0600, the defaults and generated 32-byte secrets', () => {
    expect(first.code, first.stderr).toBe(0);
    const file = path.join(dir, 'config.json');
    expect(modeOf(file)).toBe(0o600);
    const config = readConfig(dir);
    expect(config).toMatchObject({ PORT: 8787, HOST: '127.0.0.1' });
    for (const k of ['BRIDGE_VALIDATION_SECRET', 'COOKIE_SECRET']) {
      expect(config[k]).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(String(config[k]), 'base64url')).toHaveLength(32);
    }
    expect(config.BRIDGE_VALIDATION_SECRET).not.toBe(config.COOKIE_SECRET);
    // SQLite, no Redis, the outbox: nothing written for them.
    expect(config).not.toHaveProperty('DATABASE_URL');
    expect(config).not.toHaveProperty('REDIS_URL');
    expect(config).not.toHaveProperty('SMTP_URL');
  });

  it('when it finishes, then the schema exists with nothing pending and it shows the progress on stderr', async () => {
    expect(existsSync(path.join(dir, 'gatehouse.sqlite'))).toBe(true);
    expect((await inspect(dir, 'nobody@example.com')).pending).toBe(0);
    expect(first.stderr).toMatch(/✔ Applying \d+ migrations/);
    expect(first.stdout).toContain(`gatehouse serve --data-dir ${dir}`);
    expect(first.stdout).toContain('superadmin: none yet');
  });

  it('when run again, then it keeps config.json byte for byte and says what already exists', async () => {
    const before = readFileSync(path.join(dir, 'config.json'), 'utf8');
    const again = await runCli(['init', '--yes', '--data-dir', dir]);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(path.join(dir, 'config.json'), 'utf8')).toBe(before);
    expect(again.stdout).toContain('config.json kept (secrets unchanged)');
    expect(again.stdout).toContain('schema:     up to date');
    expect(again.stderr).not.toContain('Applying');
  });

  it('when run again with --port, then only PORT changes and the secrets stay', async () => {
    const before = readConfig(dir);
    const r = await runCli(['init', '--data-dir', dir, '--port', '9123', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r).config).toMatchObject({ status: 'updated', updated: ['PORT'], generated: [] });
    expect(readConfig(dir)).toEqual({ ...before, PORT: 9123 });
  });

  it('when config.json was made world-readable, then a re-run narrows it back to 0600', async () => {
    const file = path.join(dir, 'config.json');
    const { chmodSync } = await import('node:fs');
    chmodSync(file, 0o644);
    const r = await runCli(['init', '--data-dir', dir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r).config.mode_fixed).toBe(true);
    expect(modeOf(file)).toBe(0o600);
  });
});

describe('gatehouse init with a superadmin', () => {
  it('when --admin-email and --admin-password-stdin are given, then that superadmin exists with that password, verified', async () => {
    const dir = tempDir();
    const password = 'correct horse battery staple';
    const r = await runCli(
      ['init', '--no-prompt', '--data-dir', dir, '--admin-email', 'Root@Example.com', '--admin-name', 'Root', '--admin-password-stdin', '--json'],
      {
        input: `${password}\n`,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const out = json(r);
    expect(out.superadmin).toMatchObject({ status: 'created', email: 'root@example.com' });
    expect(out.superadmin).not.toHaveProperty('password');
    const { user, passwordOk } = await inspect(dir, 'root@example.com', password);
    expect(user).toMatchObject({ user_type: 'superadmin', is_verified: true, name: 'Root', id: out.superadmin.id });
    expect(passwordOk).toBe(true);

    // The same email through `user create`: the user service refuses it, in one line.
    const dup = await runCli(['user', 'create', '--data-dir', dir, '--email', 'root@example.com', '--type', 'admin']);
    expect(dup.code).toBe(1);
    expect(dup.stderr.trim()).toBe('error: Email already registered');

    // A re-run with the same flags leaves the account alone.
    const again = await runCli(['init', '--no-prompt', '--data-dir', dir, '--admin-email', 'root@example.com', '--admin-password-stdin'], {
      input: 'another password 123\n',
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('superadmin: root@example.com already exists (password unchanged)');
    expect((await inspect(dir, 'root@example.com', password)).passwordOk).toBe(true);
  });

  it('when --yes and --admin-email come without a password, then one is generated, printed once, and works', async () => {
    const dir = tempDir();
    const r = await runCli(['init', '--yes', '--data-dir', dir, '--admin-email', 'admin@example.com']);
    expect(r.code, r.stderr).toBe(0);
    const password = /password:\s+(\S+)\s+\(shown once/.exec(r.stdout)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect((await inspect(dir, 'admin@example.com', password)).passwordOk).toBe(true);
    const again = await runCli(['init', '--yes', '--data-dir', dir, '--admin-email', 'admin@example.com']);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain(password!);
  });

  it('when a password is generated, then it is the last thing init prints, after how to start the server', async () => {
    const dir = tempDir();
    const r = await runCli(['init', '--yes', '--data-dir', dir, '--admin-email', 'last@example.com']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.at(-3)).toMatch(/^Start it: {5}\S+ serve --data-dir /);
    expect(lines.at(-2)).toBe('  superadmin: last@example.com created');
    expect(lines.at(-1)).toMatch(/^ {2}password: {3}\S+ {3}\(shown once; works for 24 hours: sign in and set your own\)$/);
  });

  it('when --admin-password-file is given, then the password is read from that file', async () => {
    const dir = tempDir();
    const file = path.join(tempDir(), 'pw');
    writeFileSync(file, 'file-password-0987\n');
    const r = await runCli(['init', '--no-prompt', '--data-dir', dir, '--admin-email', 'ops@example.com', '--admin-password-file', file]);
    expect(r.code, r.stderr).toBe(0);
    expect((await inspect(dir, 'ops@example.com', 'file-password-0987')).passwordOk).toBe(true);
  });
});

describe('gatehouse init without the values it needs', () => {
  it('when --no-prompt has an admin email but no password, then it exits 2 naming the flag and writes nothing', async () => {
    const dir = path.join(tempDir(), 'data');
    const r = await runCli(['init', '--no-prompt', '--data-dir', dir, '--admin-email', 'admin@example.com']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--admin-password-stdin or --admin-password-file');
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(2);
    expect(existsSync(dir)).toBe(false);
  });

  it('when there is no terminal and neither --yes nor --no-prompt, then it behaves like --no-prompt', async () => {
    const dir = path.join(tempDir(), 'data');
    const r = await runCli(['init', '--data-dir', dir, '--admin-email', 'admin@example.com']);
    expect(r.code).toBe(2);
    expect(existsSync(dir)).toBe(false);
  });

  it('when a password flag comes without --admin-email, then it exits 2', async () => {
    const r = await runCli(['init', '--data-dir', tempDir(), '--admin-password-stdin'], { input: 'x\n' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('need --admin-email');
  });

  it('when a flag value is invalid, then it exits 1 naming the key and writes nothing', async () => {
    const dir = path.join(tempDir(), 'data');
    const r = await runCli(['init', '--yes', '--data-dir', dir, '--database-url', 'mysql://db/x', '--redis-url', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/DATABASE_URL \(from flag\)/);
    expect(r.stderr).toMatch(/REDIS_URL \(from flag\)/);
    expect(existsSync(dir)).toBe(false);
  });

  it('when config.json has an unknown key, then it exits 1 naming it and leaves the file alone', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ PORT: 8787, PROT: 1 }), { mode: 0o600 });
    const r = await runCli(['init', '--yes', '--data-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('PROT');
    expect(readConfig(dir)).toEqual({ PORT: 8787, PROT: 1 });
  });
});

describe('gatehouse init records what the quickstart and a shared Redis need', () => {
  it('when --web-pages is given, then WEB_PAGES is recorded (true; --no-web-pages records false)', async () => {
    const dir = tempDir();
    const r = await runCli(['init', '--yes', '--data-dir', dir, '--web-pages']);
    expect(r.code, r.stderr).toBe(0);
    expect(readConfig(dir).WEB_PAGES).toBe(true);
    const off = await runCli(['init', '--yes', '--data-dir', dir, '--no-web-pages', '--json']);
    expect(off.code, off.stderr).toBe(0);
    expect(json(off).config.updated).toEqual(['WEB_PAGES']);
    expect(readConfig(dir).WEB_PAGES).toBe(false);
  });

  it('when a Redis URL is given, then REDIS_PREFIX is recorded: --redis-prefix, else the one in the environment, else the default', async () => {
    const redis = await startOwnRedis();
    try {
      const given = tempDir();
      const r = await runCli(['init', '--yes', '--data-dir', given, '--redis-url', redis.url, '--redis-prefix', 'tenant-a:']);
      expect(r.code, r.stderr).toBe(0);
      expect(readConfig(given)).toMatchObject({ REDIS_URL: redis.url, REDIS_PREFIX: 'tenant-a:' });

      const fromEnv = tempDir();
      const e = await runCli(['init', '--yes', '--data-dir', fromEnv, '--redis-url', redis.url], { env: { REDIS_PREFIX: 'tenant-b:' } });
      expect(e.code, e.stderr).toBe(0);
      expect(readConfig(fromEnv).REDIS_PREFIX).toBe('tenant-b:');

      const derived = tempDir();
      const d = await runCli(['init', '--yes', '--data-dir', derived, '--redis-url', redis.url]);
      expect(d.code, d.stderr).toBe(0);
      expect(readConfig(derived).REDIS_PREFIX).toBe('gatehouse:');

      // On a data dir already set up, the flag changes just that key.
      const later = await runCli(['init', '--yes', '--data-dir', derived, '--redis-prefix', 'tenant-c:', '--json']);
      expect(later.code, later.stderr).toBe(0);
      expect(json(later).config.updated).toEqual(['REDIS_PREFIX']);
    } finally {
      await redis.close();
    }
  });

  it('when no Redis is configured, then no REDIS_PREFIX is written', async () => {
    const dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
    expect(readConfig(dir)).not.toHaveProperty('REDIS_PREFIX');
  });
});
