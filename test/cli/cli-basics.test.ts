import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { json, removeTempDirs, ROOT, runCli, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);

describe('gatehouse usage', () => {
  it('when run with --version, then it prints the package version and exits 0', async () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('when run with --help, then it lists every command and the global options', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['init', 'serve', 'migrate', 'user', 'doctor', 'sessions', 'mail']) expect(r.stdout).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
    expect(r.stdout).toContain('--data-dir');
    expect(r.stdout).toContain('--verbose');
  });

  it('when a subcommand is asked for --help, then its flags and the global ones are shown', async () => {
    const r = await runCli(['user', 'create', '--help']);
    expect(r.code).toBe(0);
    for (const f of ['--email', '--type', '--password-stdin', '--json', '--data-dir']) expect(r.stdout).toContain(f);
  });

  it('when the command is unknown, then it exits 2 with a one-line error and a hint', async () => {
    const r = await runCli(['bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: unknown command 'bogus'");
    expect(r.stderr).toContain('--help');
  });

  it('when no command is given, then it shows the usage and exits 2', async () => {
    const r = await runCli([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Usage: gatehouse');
  });

  it.each([
    [['serve', '--workers', 'many'], '--workers'],
    [['user', 'create', '--email', 'a@example.com', '--type', 'emperor'], 'emperor'],
    [['user', 'create', '--type', 'admin'], '--email'],
    [['init', '--bogus-flag'], '--bogus-flag'],
    [['init', '--admin-email', 'a@example.com', '--admin-password-stdin', '--admin-password-file', '/x'], 'cannot be used with'],
  ])('when given %j, then it is a usage error: exit 2 naming %s', async (args, needle) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(needle);
  });
});

describe('configuration errors', () => {
  it('when an environment value is wrong, then the command exits 1 listing the key before opening anything', async () => {
    const dir = tempDir();
    const r = await runCli(['migrate', '--data-dir', dir], { env: { PORT: 'abc', SESSION_TTL: 'forever' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Invalid configuration');
    expect(r.stderr).toMatch(/PORT \(from environment\)/);
    expect(r.stderr).toMatch(/SESSION_TTL \(from environment\)/);
    expect(r.stderr).not.toContain('    at ');
    // Nothing was opened: no SQLite file in the data dir.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('when a flag value is wrong, then it is reported as coming from the flag', async () => {
    const dir = tempDir();
    // (--port abc never gets this far: it is a usage error, see rough-edges.test.ts.)
    const r = await runCli(['init', '--yes', '--data-dir', dir, '--public-url', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/PUBLIC_URL \(from flag\): expected a URL/);
  });

  it('when --json is given and the configuration is wrong, then stdout holds a JSON error naming the keys', async () => {
    const dir = tempDir();
    const r = await runCli(['sessions', 'prune', '--json', '--data-dir', dir], { env: { BCRYPT_ROUNDS: '99' } });
    expect(r.code).toBe(1);
    const body = json(r);
    expect(body).toMatchObject({ success: false, code: 'CONFIG_ERROR' });
    expect(body.issues.map((i: { key: string }) => i.key)).toEqual(['BCRYPT_ROUNDS']);
  });
});
