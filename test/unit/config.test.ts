import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, describeKeys, loadConfig } from '../../src/config/load-config.js';
import { CONFIG_KEYS } from '../../src/config/schema.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gh-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const writeFile = (values: Record<string, unknown>) => writeFileSync(path.join(dir, 'config.json'), JSON.stringify(values));
const load = (env: Record<string, string> = {}, flags: Record<string, unknown> = {}) =>
  loadConfig({ env: { GATEHOUSE_DATA_DIR: dir, ...env }, flags, cwd: '/' });

function issuesOf(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig layers', () => {
  it('when nothing is set, then every key with a default has it, parsed', () => {
    const c = load();
    expect(c.port).toBe(8787);
    expect(c.host).toBe('127.0.0.1');
    expect(c.sessionTtl).toBe(7 * 86400);
    expect(c.rateLimitLogin).toEqual({ points: 5, durationSec: 900 });
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDirAbs).toBe(dir);
    expect(c.configFile).toBe(path.join(dir, 'config.json'));
    expect(c.publicBaseUrl).toBe('http://127.0.0.1:8787');
  });

  it('when a key is set in the file, the environment and a flag, then the flag wins, then the environment, then the file', () => {
    writeFile({ PORT: 1001, HOST: '10.0.0.1', LOG_LEVEL: 'debug', SESSION_TTL: '2d' });
    const c = load({ PORT: '1002', HOST: '10.0.0.2' }, { PORT: '1003' });
    expect(c.port).toBe(1003);
    expect(c.host).toBe('10.0.0.2');
    expect(c.logLevel).toBe('debug');
    expect(c.sessionTtl).toBe(2 * 86400);
    expect(c.bcryptRounds).toBe(12);
  });

  it('when the data dir is relative, then it is resolved against cwd and its config.json is read', () => {
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ PORT: 4321 }));
    const c = loadConfig({ env: {}, flags: { GATEHOUSE_DATA_DIR: path.basename(dir) }, cwd: path.dirname(dir) });
    expect(c.dataDirAbs).toBe(dir);
    expect(c.port).toBe(4321);
  });

  it('when skipFile is set, then config.json is not read', () => {
    writeFile({ PORT: 1001 });
    expect(loadConfig({ env: { GATEHOUSE_DATA_DIR: dir }, skipFile: true }).port).toBe(8787);
  });

  it('when an environment value is empty, then the lower layer still applies', () => {
    writeFile({ PORT: 1001 });
    expect(load({ PORT: '' }).port).toBe(1001);
  });
});

describe('secrets from *_FILE', () => {
  it('when NAME_FILE names a file, then its trimmed content is the value', () => {
    const file = path.join(dir, 'bridge');
    writeFileSync(file, 'a-secret-read-from-a-file-0123456789\n');
    expect(load({ BRIDGE_VALIDATION_SECRET_FILE: file }).bridgeSecret).toBe('a-secret-read-from-a-file-0123456789');
  });

  it('when both NAME and NAME_FILE are set, then NAME wins', () => {
    const file = path.join(dir, 'smtp');
    writeFileSync(file, 'smtp://file.example:25');
    expect(load({ SMTP_URL_FILE: file, SMTP_URL: 'smtp://env.example:25' }).smtpUrl).toBe('smtp://env.example:25');
  });

  it('when NAME_FILE cannot be read, then the error names NAME_FILE', () => {
    const issues = issuesOf(() => load({ COOKIE_SECRET_FILE: path.join(dir, 'missing') }));
    expect(issues).toEqual([expect.objectContaining({ key: 'COOKIE_SECRET_FILE', source: 'environment', message: expect.stringContaining('ENOENT') })]);
  });
});

describe('invalid configuration', () => {
  it('when several values are wrong across layers, then every wrong key is listed with its source', () => {
    writeFile({ BCRYPT_ROUNDS: 40 });
    const issues = issuesOf(() => load({ PORT: 'abc', SESSION_TTL: 'forever', DATABASE_URL: 'mysql://x/y' }, { LOG_LEVEL: 'loud' }));
    const byKey = Object.fromEntries(issues.map((i) => [i.key, i.source]));
    expect(byKey).toEqual({
      BCRYPT_ROUNDS: 'config file',
      PORT: 'environment',
      SESSION_TTL: 'environment',
      DATABASE_URL: 'environment',
      LOG_LEVEL: 'flag',
    });
  });

  it('when the session lifetime keys are set, then the idle timeout is 0 (off) or at least 5 minutes, and the lifetime 1 hour to 365 days', () => {
    expect(load()).toMatchObject({ sessionIdleTimeout: 0, sessionMaxLifetime: 30 * 86400 });
    expect(load({ SESSION_IDLE_TIMEOUT: '30m', SESSION_MAX_LIFETIME: '24h' })).toMatchObject({ sessionIdleTimeout: 1800, sessionMaxLifetime: 86400 });
    for (const bad of [
      { SESSION_IDLE_TIMEOUT: '60' } as Record<string, string>,
      { SESSION_IDLE_TIMEOUT: '31d' },
      { SESSION_MAX_LIFETIME: '0' },
      { SESSION_MAX_LIFETIME: '366d' },
    ]) {
      expect(issuesOf(() => load(bad)).map((i) => i.key)).toEqual(Object.keys(bad));
    }
  });

  it('when the error is printed, then its message names each key and points at the README', () => {
    try {
      load({ PORT: 'abc', RATE_LIMIT_LOGIN: '5 per minute' });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toMatch(/PORT \(from environment\)/);
      expect((err as Error).message).toMatch(/RATE_LIMIT_LOGIN \(from environment\): expected "attempts\/window"/);
      expect((err as Error).message).toContain('README.md');
    }
  });

  it('when config.json has unknown keys, then they are reported, not ignored', () => {
    writeFile({ PORT: 8787, PROT: 1, database_url: 'x' });
    const keys = issuesOf(() => load()).map((i) => i.key);
    expect(keys.sort()).toEqual(['PROT', 'database_url']);
  });

  it('when config.json is not JSON or not an object, then the file is reported', () => {
    writeFileSync(path.join(dir, 'config.json'), '{ PORT: 1 ');
    expect(issuesOf(() => load())[0].message).toContain('not valid JSON');
    writeFileSync(path.join(dir, 'config.json'), '[1]');
    expect(issuesOf(() => load())[0].message).toContain('JSON object');
  });
});

describe('the loaded configuration', () => {
  it('when loaded, then it is frozen', () => {
    const c = load();
    expect(Object.isFrozen(c)).toBe(true);
    expect(() => {
      (c as unknown as { port: number }).port = 1;
    }).toThrow(TypeError);
  });

  it('when HOST is a wildcard and PUBLIC_URL is unset, then publicBaseUrl uses localhost; a PUBLIC_URL loses its trailing slash', () => {
    expect(load({ HOST: '0.0.0.0', PORT: '9000' }).publicBaseUrl).toBe('http://localhost:9000');
    expect(load({ PUBLIC_URL: 'https://auth.example.com/' }).publicBaseUrl).toBe('https://auth.example.com');
  });

  it('when keys are described, then every CONFIG_KEYS entry is there with its doc and secret flag', () => {
    const described = describeKeys();
    expect(described.map((d) => d.name)).toEqual(Object.keys(CONFIG_KEYS));
    expect(described.find((d) => d.name === 'BRIDGE_VALIDATION_SECRET')).toMatchObject({ secret: true });
    expect(described.find((d) => d.name === 'PORT')).toMatchObject({ secret: false, default: 8787 });
    for (const d of described) expect(d.doc.length).toBeGreaterThan(3);
  });
});

describe('REGISTRATION_ENUMERATION_SAFE', () => {
  it('when it is on without REQUIRE_EMAIL_VERIFICATION, then loading names the key and says what it needs', () => {
    const issues = issuesOf(() => load({ REGISTRATION_ENUMERATION_SAFE: 'true' }));
    expect(issues).toEqual([
      expect.objectContaining({
        key: 'REGISTRATION_ENUMERATION_SAFE',
        source: 'environment',
        message: expect.stringMatching(/REQUIRE_EMAIL_VERIFICATION=true/),
      }),
    ]);
  });

  it('when it is on with verification required, then it loads; off by default', () => {
    expect(load().registrationEnumerationSafe).toBe(false);
    expect(load({ REGISTRATION_ENUMERATION_SAFE: 'true', REQUIRE_EMAIL_VERIFICATION: 'true' }).registrationEnumerationSafe).toBe(true);
  });
});

describe('CORS_ORIGINS (ASVS 3.4.2)', () => {
  it('when it holds `*`, then loading names the key and says to list the origins (CORS answers with credentials)', () => {
    for (const value of ['*', 'https://app.example.test, *']) {
      const issues = issuesOf(() => load({ CORS_ORIGINS: value }));
      expect(issues).toEqual([
        expect.objectContaining({
          key: 'CORS_ORIGINS',
          source: 'environment',
          message: expect.stringMatching(/`\*` is refused.*credentials.*list the origins/),
        }),
      ]);
    }
    writeFile({ CORS_ORIGINS: ['*'] });
    expect(issuesOf(() => load())).toEqual([expect.objectContaining({ key: 'CORS_ORIGINS', source: 'config file' })]);
  });

  it('when it lists origins, then they load as given', () => {
    expect(load({ CORS_ORIGINS: 'https://a.example.test, https://b.example.test' }).corsOrigins).toEqual(['https://a.example.test', 'https://b.example.test']);
  });
});

describe('unencrypted backends on another host (ASVS 12.3.1)', () => {
  it('refuses a PostgreSQL or Redis URL to another host without TLS, naming the key and what to add', () => {
    expect(issuesOf(() => load({ DATABASE_URL: 'postgres://gh:pw@db.internal:5432/gatehouse' }))).toEqual([
      expect.objectContaining({ key: 'DATABASE_URL', message: expect.stringMatching(/db\.internal unencrypted.*sslmode=require.*ALLOW_PLAINTEXT_BACKENDS/) }),
    ]);
    expect(issuesOf(() => load({ DATABASE_URL: 'postgres://gh@10.0.0.5/gh?sslmode=prefer', REDIS_URL: 'redis://cache.internal:6379' }))).toEqual([
      expect.objectContaining({ key: 'DATABASE_URL' }),
      expect.objectContaining({ key: 'REDIS_URL', message: expect.stringMatching(/rediss:\/\//) }),
    ]);
  });

  it('accepts TLS, this machine (loopback, a Unix socket) and the explicit opt-out', () => {
    for (const [db, redis] of [
      ['postgres://gh@db.internal/gh?sslmode=require', 'rediss://cache.internal:6380'],
      ['postgres://gh@db.internal/gh?sslmode=verify-full', 'rediss://cache.internal'],
      ['postgres://gh@db.internal/gh?ssl=true', 'rediss://cache.internal'],
      ['postgres://gh@127.0.0.1:5432/gh', 'redis://127.0.0.1:6379'],
      ['postgres://gh@localhost/gh', 'redis://localhost'],
      ['postgres://gh@[::1]/gh', 'redis://[::1]:6379'],
      ['postgres://gh@db.internal/gh?host=/var/run/postgresql', 'redis://127.0.0.1'],
    ])
      expect(load({ DATABASE_URL: db, REDIS_URL: redis }).databaseUrl).toBe(db);
    const c = load({ DATABASE_URL: 'postgres://gh@db.internal/gh', REDIS_URL: 'redis://cache.internal', ALLOW_PLAINTEXT_BACKENDS: 'true' });
    expect(c.allowPlaintextBackends).toBe(true);
  });
});

describe('out-of-band codes and links (ASVS 6.5.5)', () => {
  it('a sign-in link lives 10 minutes by default, as the two-factor module’s codes do', () => {
    expect(load().loginTokenTtl).toBe(600);
  });
});
