import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeSupport } from '../../src/cli/checks/node-version.js';
import { json, removeTempDirs, runCli, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);

describe('gatehouse migrate', () => {
  it('when --dry-run runs on a fresh data dir, then it lists every core migration with its SQL and applies none', async () => {
    const dir = tempDir();
    const dry = await runCli(['migrate', '--dry-run', '--json', '--data-dir', dir]);
    expect(dry.code, dry.stderr).toBe(0);
    const plan = json(dry);
    expect(plan).toMatchObject({ success: true, dry_run: true, applied_before: 0 });
    const ids = plan.pending.map((m: { id: string }) => m.id);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    expect(ids.every((id: string) => id.startsWith('core/'))).toBe(true);
    expect(plan.pending[0].sql.join('\n')).toMatch(/CREATE TABLE.*users/);

    // Nothing was applied: the same plan again, then a real run applies exactly it.
    const human = await runCli(['migrate', '--dry-run', '--data-dir', dir]);
    expect(human.stdout).toContain(`${ids.length} pending migrations (dry run, nothing changed)`);
    const applied = await runCli(['migrate', '--json', '--data-dir', dir]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(json(applied).applied.map((m: { id: string }) => m.id)).toEqual(ids);
    expect(applied.stderr).toMatch(new RegExp(`✔ Applying ${ids.length} migrations`));

    const again = await runCli(['migrate', '--data-dir', dir]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Nothing to do: the schema is up to date (${ids.length} migrations applied)`);
  });
});

describe('commands on a data dir without the schema', () => {
  it('when user create runs before migrate, then it exits 1 pointing at gatehouse migrate', async () => {
    const dir = tempDir();
    // An empty SQLite database (a missing one is refused earlier, naming init: read-only-checks.test.ts).
    writeFileSync(path.join(dir, 'gatehouse.sqlite'), '');
    const r = await runCli(['user', 'create', '--data-dir', dir, '--email', 'early@example.com', '--type', 'admin']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: the database schema is not up to date \(\d+ pending migrations\)$/m);
    expect(r.stderr).toContain(`hint: run gatehouse migrate --data-dir ${dir}`);
  });
});

describe('commands on an initialised data dir', () => {
  let dir: string;

  beforeAll(async () => {
    dir = tempDir();
    const r = await runCli(['init', '--yes', '--data-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('when user create --json is given no password, then it prints the id and a generated password once', async () => {
    const r = await runCli([
      'user',
      'create',
      '--json',
      '--data-dir',
      dir,
      '--email',
      'Writer@Example.com',
      '--type',
      'writer',
      '--name',
      'Wri',
      '--last-name',
      'Ter',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = json(r);
    expect(out).toMatchObject({ success: true, email: 'writer@example.com', user_type: 'writer' });
    expect(out.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(r.stderr).toBe('');
  });

  it('when the password comes on stdin, then it is not echoed and the user exists', async () => {
    const r = await runCli(['user', 'create', '--data-dir', dir, '--email', 'cust@example.com', '--type', 'customer', '--password-stdin'], {
      input: 'a long enough secret\n',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Created customer cust@example\.com\nid: [0-9a-f-]{36}\n$/);
    expect(r.stdout).not.toContain('a long enough secret');
  });

  it('when the input breaks the API rules, then it exits 1 with the same message the API gives', async () => {
    const weak = await runCli(['user', 'create', '--data-dir', dir, '--email', 'weak@example.com', '--type', 'admin', '--password-stdin'], {
      input: 'password\n',
    });
    expect(weak.code).toBe(1);
    expect(weak.stderr).toContain('error: Password is too common');
    const bad = await runCli(['user', 'create', '--json', '--data-dir', dir, '--email', 'not-an-email', '--type', 'admin']);
    expect(bad.code).toBe(1);
    expect(json(bad)).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
  });

  it('when doctor --json runs on a healthy data dir, then every check is reported and it exits 0', async () => {
    const r = await runCli(['doctor', '--json', '--data-dir', dir]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = json(r);
    expect(out.success).toBe(true);
    const byId = Object.fromEntries(out.checks.map((c: { id: string; status: string }) => [c.id, c.status]));
    expect(Object.keys(byId)).toEqual(
      expect.arrayContaining(['node-version', 'config', 'config-file-mode', 'secrets', 'data-dir', 'database', 'migrations', 'redis', 'smtp']),
    );
    for (const id of ['config', 'config-file-mode', 'secrets', 'data-dir', 'database', 'migrations', 'redis']) {
      expect(byId[id], id).toBe('ok');
    }
    // Node 20 (end of life) only warns, which leaves the exit code at 0.
    expect(byId['node-version']).toBe(runtimeSupport(process.versions.node).status);
    for (const c of out.checks)
      expect(c).toEqual(expect.objectContaining({ title: expect.any(String), category: expect.any(String), message: expect.any(String) }));
  });

  it('when DATABASE_URL points nowhere, then doctor fails the database check, skips what depends on it and exits 1', async () => {
    const r = await runCli(['doctor', '--json', '--data-dir', dir], { env: { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' } });
    expect(r.code).toBe(1);
    const checks = json(r).checks as { id: string; status: string; message: string; hint?: string }[];
    const db = checks.find((c) => c.id === 'database')!;
    expect(db.status).toBe('fail');
    expect(db.message).toContain('ECONNREFUSED');
    expect(db.hint).toContain('DATABASE_URL');
    expect(checks.find((c) => c.id === 'migrations')!.status).toBe('skip');
    expect(checks.find((c) => c.id === 'config')!.status).toBe('ok');
  });

  it('when the bridge secret is weak, then doctor fails the configuration with the rule serve enforces', async () => {
    const r = await runCli(['doctor', '--json', '--data-dir', dir], { env: { BRIDGE_VALIDATION_SECRET: 'changeme-changeme-changeme-12345' } });
    expect(r.code).toBe(1);
    const config = json(r).checks.find((c: { id: string }) => c.id === 'config');
    expect(config).toMatchObject({ status: 'fail' });
    expect(config.message).toContain('BRIDGE_VALIDATION_SECRET');
    expect(config.message).toContain('placeholder');
  });

  it('when CORS_ORIGINS is `*`, then doctor fails the configuration check naming the key', async () => {
    const r = await runCli(['doctor', '--json', '--data-dir', dir], { env: { CORS_ORIGINS: '*' } });
    expect(r.code).toBe(1);
    const config = json(r).checks.find((c: { id: string }) => c.id === 'config');
    expect(config).toMatchObject({ status: 'fail' });
    expect(config.message).toMatch(/CORS_ORIGINS \(environment\): `\*` is refused/);
  });

  it('when the configuration is invalid, then doctor reports it as the failing check instead of stopping', async () => {
    const r = await runCli(['doctor', '--data-dir', dir], { env: { PORT: 'abc' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL\s+Configuration valid\s+PORT \(environment\)/);
    expect(r.stdout).toMatch(/skip\s+Database reachable/);
  });

  it('when sessions prune runs, then it reports how many expired sessions it deleted', async () => {
    const r = await runCli(['sessions', 'prune', '--json', '--data-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toEqual({ success: true, deleted: 0 });
  });

  it('when mail test runs without SMTP, then the test message lands in the outbox', async () => {
    const r = await runCli(['mail', 'test', '--to', 'ops@example.com', '--json', '--data-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ success: true, to: 'ops@example.com', transport: 'outbox' });
    expect(readdirSync(path.join(dir, 'outbox')).length).toBeGreaterThan(0);
  });

  it('when mail test gets an address the one email rule refuses, then it exits 2 naming --to and sends nothing', async () => {
    const outbox = () => (existsSync(path.join(dir, 'outbox')) ? readdirSync(path.join(dir, 'outbox')).length : 0);
    const before = outbox();
    // Each of these passed the looser rule mail test used before (no dot in the domain, a quote, 255 characters).
    for (const to of ['a@b', 'x"y"@example.com', `${'a'.repeat(243)}@example.com`]) {
      const r = await runCli(['mail', 'test', '--to', to, '--json', '--data-dir', dir]);
      expect(r.code, to).toBe(2);
      expect(r.stderr).toMatch(/^error: --to: /m);
      expect(r.stderr).toContain('hint: pass --to with an address such as ops@example.com');
      expect(json(r)).toMatchObject({ success: false, code: 'USAGE' });
    }
    expect(outbox()).toBe(before);
  });

  it('when mail test gets a padded upper-case address, then it goes to the lower-case address', async () => {
    const r = await runCli(['mail', 'test', '--to', '  Ops@Example.COM ', '--json', '--data-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ success: true, to: 'ops@example.com', transport: 'outbox' });
  });
});
