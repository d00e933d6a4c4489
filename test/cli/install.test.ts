import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../src/config/schema.js';
import { hostFootprint, install, INSTALL_TIMEOUT, removeInstallDirs, ROOT, tempDir, type Run } from '../helpers/install.js';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

afterAll(removeInstallDirs, INSTALL_TIMEOUT);

describe('install.sh usage', () => {
  it('when run with --help, then it lists every option and exits 0', async () => {
    const run = await install(['--help']);
    expect(run.code).toBe(0);
    for (const flag of [
      '--prefix',
      '--data-dir',
      '--source',
      '--env-file',
      '--user',
      '--port',
      '--host',
      '--public-url',
      '--database-url',
      '--redis-url',
      '--smtp-url',
      '--mail-from',
      '--admin-email',
      '--admin-password-file',
      '--with-postgres',
      '--with-redis',
      '--with-nginx',
      '--domain',
      '--nginx-dir',
      '--systemd-dir',
      '--no-systemd',
      '--no-system-user',
      '--skip-build',
      '--skip-init',
      '--help',
    ]) {
      expect(run.stdout).toContain(flag);
    }
  });

  it.each([
    [['--bogus'], 'unknown option: --bogus'],
    [['--prefix'], '--prefix needs a value'],
    [['--no-systemd=yes'], '--no-systemd takes no value'],
    [['--port', 'eighty'], '--port'],
    [['--with-nginx', '--no-systemd'], '--with-nginx needs --domain'],
    [['--with-nginx', '--domain', 'example.test', '--port', '0'], 'fixed --port'],
    [['--domain', 'example.test'], 'need --with-nginx'],
    [['--with-postgres', '--database-url', 'postgres://db.example/gatehouse'], '--with-postgres or --database-url'],
    [['--with-redis', '--redis-url', 'redis://127.0.0.1:6379'], '--with-redis or --redis-url'],
    [['--no-systemd', '--systemd-dir', '/tmp/units'], '--no-systemd or --systemd-dir'],
    [['--admin-email', 'admin@example.test'], '--admin-password-file'],
    [['--prefix', '/tmp/with space'], '--prefix'],
    [['--data-dir', '/'], 'refusing'],
    [['--no-systemd', '--user', 'someone'], 'no effect with --no-systemd'],
    [['--skip-init', '--database-url', 'postgres://db.example/gatehouse'], '--database-url configure Gatehouse through gatehouse init'],
    [
      ['--skip-init', '--with-postgres', '--admin-email', 'a@example.test', '--admin-password-file', '/etc/hostname'],
      '--admin-email --with-postgres configure',
    ],
    [['--no-system-user', '--user', 'no-such-user-here', '--systemd-dir', '/tmp/units'], 'which does not exist'],
  ])('when given %j, then it exits 2 before doing anything', async (args, message) => {
    const run = await install(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stdout).not.toContain('==>');
  });
});

describe('install.sh --skip-init into temp dirs', () => {
  let dir: string;
  let prefix: string;
  let data: string;
  let run: Run;
  let footprintBefore: Record<string, boolean>;

  beforeAll(async () => {
    dir = tempDir();
    prefix = path.join(dir, 'opt');
    data = path.join(dir, 'data');
    footprintBefore = hostFootprint();
    run = await install([
      // --no-system-user: the unit names an existing user (this one), not one nobody created.
      '--prefix',
      prefix,
      '--data-dir',
      data,
      '--skip-init',
      '--no-system-user',
      '--user',
      os.userInfo().username,
      '--systemd-dir',
      path.join(dir, 'systemd'),
      '--with-nginx',
      '--domain',
      'example.test',
      '--nginx-dir',
      path.join(dir, 'nginx'),
      '--port',
      '18787',
    ]);
  }, INSTALL_TIMEOUT);

  it('when it finishes, then it exits 0 and prints what it did and the next steps', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Next steps:');
    expect(run.stdout).toContain(`wrote ${path.join(dir, 'nginx', 'gatehouse.conf')}`);
  });

  it('when it finishes, then the prefix holds a built production tree without tests or dev dependencies', () => {
    expect(existsSync(path.join(prefix, 'dist', 'src', 'config', 'load-config.js'))).toBe(true);
    expect(readdirSync(path.join(prefix, 'bin')).sort()).toEqual(readdirSync(path.join(ROOT, 'bin')).sort());
    expect(existsSync(path.join(prefix, 'templates', 'systemd', 'gatehouse.service'))).toBe(true);
    expect(existsSync(path.join(prefix, 'node_modules', 'express'))).toBe(true);
    expect(existsSync(path.join(prefix, 'node_modules', 'vitest'))).toBe(false);
    expect(existsSync(path.join(prefix, 'node_modules', 'typescript'))).toBe(false);
    expect(existsSync(path.join(prefix, 'test'))).toBe(false);
    expect(existsSync(path.join(prefix, 'data'))).toBe(false);
  });

  it('when init is skipped, then the data dir exists (mode 0750) with no config.json', () => {
    expect(statSync(data).isDirectory()).toBe(true);
    expect(statSync(data).mode & 0o777).toBe(0o750);
    expect(existsSync(path.join(data, 'config.json'))).toBe(false);
  });

  it('when --with-nginx --domain is given, then the site proxies the domain to the port with forwarding headers', () => {
    const site = readFileSync(path.join(dir, 'nginx', 'gatehouse.conf'), 'utf8');
    expect(site).toMatch(/server_name example\.test;/);
    expect(site).toContain('proxy_pass http://127.0.0.1:18787;');
    expect(site).toContain('proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;');
    expect(site).toContain('proxy_set_header X-Forwarded-Proto $scheme;');
    expect(site).toContain('proxy_set_header X-Request-ID $request_id;');
    expect(site).toContain('server_tokens off;');
    expect(site).not.toMatch(/@[A-Z_]+@/);
    const env = readFileSync(path.join(prefix, 'etc', 'gatehouse.env'), 'utf8');
    expect(env).toMatch(/^TRUST_PROXY=1$/m);
  });

  it('when --systemd-dir is given, then the unit runs the installed CLI as the service user, hardened', () => {
    const unit = readFileSync(path.join(dir, 'systemd', 'gatehouse.service'), 'utf8');
    // The env file is read by Gatehouse itself, as every command does, not by systemd alone.
    const exec = `${escapeRe(prefix)}/bin/gatehouse serve --data-dir ${escapeRe(data)} --environment-file ${escapeRe(prefix)}/etc/gatehouse.env`;
    expect(unit).toMatch(new RegExp(`^ExecStart=/\\S*node ${exec}$`, 'm'));
    expect(unit).toMatch(new RegExp(`^User=${os.userInfo().username}$`, 'm'));
    expect(unit).toMatch(/^Environment=NODE_ENV=production$/m);
    expect(unit).not.toContain('EnvironmentFile=');
    expect(unit).toContain(`ReadWritePaths=${data}`);
    const hardening = [
      'NoNewPrivileges=true',
      'ProtectSystem=strict',
      'Restart=on-failure',
      'ProtectHome=yes',
      'SystemCallFilter=@system-service',
      'SystemCallArchitectures=native',
      'ProtectProc=invisible',
      'ProcSubset=pid',
      'RemoveIPC=yes',
    ];
    for (const line of hardening) expect(unit).toMatch(new RegExp(`^${escapeRe(line)}$`, 'm'));
    // The data dir is under /tmp here: a private /tmp would hide it from the service.
    expect(unit).toMatch(/^PrivateTmp=false$/m);
    expect(run.stderr).toContain('PrivateTmp=false');
    expect(unit).not.toMatch(/@[A-Z_]+@/);
  });

  it('when run as root in temp dirs, then nothing outside them changed', () => {
    expect(hostFootprint()).toEqual(footprintBefore);
  });

  it(
    'when re-run after the site was edited, then it keeps the edit, writes .new and does not repeat TRUST_PROXY',
    async () => {
      const site = path.join(dir, 'nginx', 'gatehouse.conf');
      const edited = readFileSync(site, 'utf8') + '# listen 443 ssl; # managed by Certbot\n';
      writeFileSync(site, edited);
      const again = await install([
        '--prefix',
        prefix,
        '--data-dir',
        data,
        '--skip-init',
        '--skip-build',
        '--no-systemd',
        '--with-nginx',
        '--domain',
        'example.test',
        '--nginx-dir',
        path.join(dir, 'nginx'),
        '--port',
        '18787',
      ]);
      expect(again.code, again.stderr).toBe(0);
      expect(readFileSync(site, 'utf8')).toBe(edited);
      expect(readFileSync(`${site}.new`, 'utf8')).toContain('proxy_pass http://127.0.0.1:18787;');
      const env = readFileSync(path.join(prefix, 'etc', 'gatehouse.env'), 'utf8');
      expect(env.match(/^TRUST_PROXY=/gm)).toHaveLength(1);
    },
    INSTALL_TIMEOUT,
  );
});

describe('install.sh with gatehouse init', () => {
  let prefix: string;
  let data: string;
  let args: string[];
  let first: Run;
  let footprintBefore: Record<string, boolean>;

  beforeAll(async () => {
    const dir = tempDir();
    prefix = path.join(dir, 'opt');
    data = path.join(dir, 'data');
    args = ['--prefix', prefix, '--data-dir', data, '--no-systemd', '--port', '0'];
    footprintBefore = hostFootprint();
    first = await install(args);
  }, INSTALL_TIMEOUT);

  it('when it finishes, then the CLI is installed and config.json exists with mode 0600', () => {
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(path.join(prefix, 'bin', 'gatehouse'))).toBe(true);
    expect(existsSync(path.join(prefix, 'dist', 'entry', 'cli.js'))).toBe(true);
    expect(statSync(path.join(data, 'config.json')).mode & 0o777).toBe(0o600);
    // The SQLite file holds password hashes: nothing init wrote may be readable by other users.
    for (const name of readdirSync(data)) expect([name, statSync(path.join(data, name)).mode & 0o077]).toEqual([name, 0]);
    expect(hostFootprint()).toEqual(footprintBefore);
    // The environment file the service would read is recorded, so `doctor --data-dir` reads it too.
    expect(JSON.parse(readFileSync(path.join(data, 'config.json'), 'utf8')).GATEHOUSE_ENV_FILE).toBe(path.join(prefix, 'etc', 'gatehouse.env'));
    expect(first.stdout).toContain(`doctor --data-dir ${data}   (reads ${path.join(prefix, 'etc', 'gatehouse.env')} too, as the service does)`);
  });

  it(
    'when run a second time, then it exits 0 and config.json keeps its secrets',
    async () => {
      const file = path.join(data, 'config.json');
      const before = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      const secretKeys = Object.entries(CONFIG_KEYS)
        .filter(([, def]) => 'secret' in def && def.secret)
        .map(([name]) => name)
        .filter((name) => before[name] !== undefined);
      expect(secretKeys.length).toBeGreaterThan(0);

      const second = await install(args);
      expect(second.code, second.stderr).toBe(0);
      const after = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      for (const name of secretKeys) expect(after[name]).toBe(before[name]);
      expect(after).toEqual(before);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    },
    INSTALL_TIMEOUT,
  );
});
