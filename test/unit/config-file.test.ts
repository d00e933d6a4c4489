import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load-config.js';
import { readExistingConfig, validateValues, writeConfigFile } from '../../src/cli/config-file.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gh-config-file-'));
  file = path.join(dir, 'data', 'config.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const read = () => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
const mode = () => statSync(file).mode & 0o777;

describe('the config file init writes', () => {
  it('when there is none, then it is created (and its dir) with mode 0600, the values and both secrets', () => {
    const change = writeConfigFile(file, null, { PORT: 9000, HOST: '0.0.0.0' });
    expect(change).toEqual({ status: 'created', updated: [], generated: ['BRIDGE_VALIDATION_SECRET', 'COOKIE_SECRET'], modeFixed: false });
    expect(mode()).toBe(0o600);
    expect(read()).toMatchObject({ PORT: 9000, HOST: '0.0.0.0' });
    // What it writes is what loadConfig reads back.
    const config = loadConfig({ env: { GATEHOUSE_DATA_DIR: path.dirname(file) } });
    expect(config.port).toBe(9000);
    expect(config.bridgeSecret).toBe(read().BRIDGE_VALIDATION_SECRET);
  });

  it('when it exists and nothing changes, then the file is not rewritten', () => {
    writeConfigFile(file, null, { PORT: 9000 });
    const before = statSync(file).mtimeMs;
    const text = readFileSync(file, 'utf8');
    const change = writeConfigFile(file, readExistingConfig(file), {});
    expect(change.status).toBe('kept');
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(statSync(file).mtimeMs).toBe(before);
  });

  it('when values change, then only those keys are updated and the secrets and other keys stay', () => {
    writeConfigFile(file, null, { PORT: 9000, MAIL_FROM: 'a@example.com' });
    const before = read();
    const change = writeConfigFile(file, readExistingConfig(file), { PORT: 9001, REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(change).toMatchObject({ status: 'updated', updated: ['PORT'], generated: [] });
    expect(read()).toEqual({ ...before, PORT: 9001, REDIS_URL: 'redis://127.0.0.1:6379' });
  });

  it('when a secret is missing from an existing file, then only that one is generated', () => {
    const existing = { PORT: 1, BRIDGE_VALIDATION_SECRET: 'kept-bridge-secret-0123456789abcdef' };
    const change = writeConfigFile(file, existing, {});
    expect(change.generated).toEqual(['COOKIE_SECRET']);
    expect(read().BRIDGE_VALIDATION_SECRET).toBe('kept-bridge-secret-0123456789abcdef');
  });

  it('when the file is readable by others, then it is narrowed to 0600 and says so', () => {
    writeConfigFile(file, null, {});
    chmodSync(file, 0o644);
    expect(writeConfigFile(file, readExistingConfig(file), {}).modeFixed).toBe(true);
    expect(mode()).toBe(0o600);
  });

  it('when values are invalid, then every wrong key is named with the source', () => {
    try {
      validateValues({ PORT: 'x', DATABASE_URL: 'mysql://db', HOST: 'ok' }, 'flag');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).issues.map((i) => `${i.key}/${i.source}`)).toEqual(['PORT/flag', 'DATABASE_URL/flag']);
    }
  });

  it('when the existing file has an unknown key, then reading it is a ConfigError', () => {
    writeConfigFile(file, null, {});
    writeFileSync(file, JSON.stringify({ ...read(), NOPE: 1 }));
    expect(() => readExistingConfig(file)).toThrow(/NOPE/);
    expect(readExistingConfig(path.join(dir, 'missing.json'))).toBeNull();
  });
});
