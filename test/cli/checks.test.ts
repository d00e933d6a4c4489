import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCheckContext, runChecks, type Check } from '../../src/cli/checks/check.js';
import { configFileModeCheck } from '../../src/cli/checks/config-file-mode.js';
import { dataDirCheck } from '../../src/cli/checks/data-dir.js';
import { preflightChecks, doctorChecks } from '../../src/cli/checks/index.js';
import { versionAtLeast } from '../../src/cli/checks/node-version.js';
import { secretsCheck, weakness } from '../../src/cli/checks/secrets.js';
import { loadConfig } from '../../src/config/load-config.js';
import { moduleSettingsCheck } from '../../src/cli/checks/module-checks.js';
import { moduleEnvNames } from '../../src/modules/module-env.js';
import { registry } from '../../modules/index.js';
import { createLogger } from '../../src/log/logger.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gh-checks-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const logger = createLogger('silent');
const noApp = async () => {
  throw new Error('no app in this test');
};
const ctxFor = (env: Record<string, string> = {}) =>
  createCheckContext({ config: loadConfig({ env: { GATEHOUSE_DATA_DIR: dir, ...env } }), logger, openApp: noApp });

describe('doctor checks as data', () => {
  it('when listed, then each has a unique id, a title and a category; init and serve reuse the preflight ones', () => {
    const all = doctorChecks();
    expect(new Set(all.map((c) => c.id)).size).toBe(all.length);
    for (const c of all) expect(c).toEqual(expect.objectContaining({ title: expect.any(String), category: expect.any(String), run: expect.any(Function) }));
    expect(preflightChecks('serve').map((c) => c.id)).toEqual(['node-version', 'data-dir', 'database', 'redis', 'migrations']);
    expect(preflightChecks('init').map((c) => c.id)).toEqual(['node-version', 'data-dir', 'database', 'redis']);
  });

  it('when a check throws, then it is a failure with the message; a check that needs it is skipped', async () => {
    const boom: Check = {
      id: 'a',
      title: 'A',
      category: 't',
      run: async () => {
        throw new Error('bad\nthing');
      },
    };
    const after: Check = { id: 'b', title: 'B', category: 't', needs: ['a'], run: async () => ({ status: 'ok', message: 'ran' }) };
    const out = await runChecks([boom, after], ctxFor());
    expect(out.map((o) => [o.id, o.status, o.message])).toEqual([
      ['a', 'fail', 'bad; thing'],
      ['b', 'skip', 'not checked: a failed'],
    ]);
  });

  it('when the configuration did not load, then only checks marked withoutConfig run', async () => {
    const needsConfig: Check = { id: 'c', title: 'C', category: 't', run: async () => ({ status: 'ok', message: 'x' }) };
    const free: Check = { id: 'f', title: 'F', category: 't', withoutConfig: true, run: async () => ({ status: 'ok', message: 'x' }) };
    const ctx = createCheckContext({ config: null, configError: new Error('x'), logger, openApp: noApp });
    expect((await runChecks([needsConfig, free], ctx)).map((o) => o.status)).toEqual(['skip', 'ok']);
  });
});

describe('individual checks', () => {
  it('when versions are compared, then major, minor and patch count in order', () => {
    expect(versionAtLeast('20.19.0', '20.19.0')).toBe(true);
    expect(versionAtLeast('v22.1.0', '20.19.0')).toBe(true);
    expect(versionAtLeast('20.18.9', '20.19.0')).toBe(false);
    expect(versionAtLeast('20.9.0', '20.19.0')).toBe(false);
  });

  it('when secrets are short, placeholders or low-entropy, then they are weak; a generated one is not', () => {
    expect(weakness('short')).toMatch(/shorter than 32/);
    expect(weakness('please-change-me-please-change-me-now')).toMatch(/change-me/);
    expect(weakness('a'.repeat(40))).toMatch(/distinct/);
    expect(weakness('Zq1o5aV0cP8n2xX7wL3k9Jm4Rt6yB0sD-_eF')).toBeNull();
  });

  it('when the bridge secret is missing, then the secrets check fails; a weak cookie secret only warns', async () => {
    expect((await secretsCheck.run(ctxFor())).status).toBe('fail');
    const strong = 'Zq1o5aV0cP8n2xX7wL3k9Jm4Rt6yB0sD-_eF';
    const r = await secretsCheck.run(ctxFor({ BRIDGE_VALIDATION_SECRET: strong, COOKIE_SECRET: 'only-sixteen-chars' }));
    expect(r).toMatchObject({ status: 'warn', message: expect.stringContaining('COOKIE_SECRET') });
    expect((await secretsCheck.run(ctxFor({ BRIDGE_VALIDATION_SECRET: strong, COOKIE_SECRET: strong }))).status).toBe('ok');
  });

  it('when a module setting in the environment fits no reading, then the module-settings check warns naming it', async () => {
    const names = moduleEnvNames(registry);
    const ctxWith = (env: Record<string, string>) =>
      createCheckContext({ config: loadConfig({ env: { GATEHOUSE_DATA_DIR: dir, ...env }, moduleEnv: names }), logger, openApp: noApp, modules: registry });
    expect((await moduleSettingsCheck.run(ctxWith({}))).status).toBe('skip');
    const good = await moduleSettingsCheck.run(ctxWith({ POST_TYPES_ENABLED: 'false', RATE_LIMIT_TWO_FACTOR_USER: '3/5m' }));
    expect(good).toMatchObject({ status: 'ok', message: expect.stringContaining('POST_TYPES_ENABLED') });
    const bad = await moduleSettingsCheck.run(ctxWith({ POST_TYPES_ENABLED: 'sometimes', RATE_LIMIT_TWO_FACTOR_USER: 'often' }));
    expect(bad.status).toBe('warn');
    expect(bad.message).toMatch(/POST_TYPES_ENABLED=.*post-types\.enabled/);
    expect(bad.message).toMatch(/RATE_LIMIT_TWO_FACTOR_USER=/);
  });

  it('when config.json is group- or world-readable, then the mode check warns or fails', async () => {
    const file = path.join(dir, 'config.json');
    expect((await configFileModeCheck.run(ctxFor())).status).toBe('warn');
    for (const [m, status] of [
      [0o600, 'ok'],
      [0o640, 'warn'],
      [0o604, 'fail'],
    ] as const) {
      writeFileSync(file, '{}', { mode: m });
      const { chmodSync } = await import('node:fs');
      chmodSync(file, m);
      expect((await configFileModeCheck.run(ctxFor())).status, m.toString(8)).toBe(status);
    }
  });

  it('when the data dir is missing, then the data-dir check fails and names init', async () => {
    const ctx = createCheckContext({ config: loadConfig({ env: { GATEHOUSE_DATA_DIR: path.join(dir, 'nope') } }), logger, openApp: noApp });
    const r = await dataDirCheck.run(ctx);
    expect(r.status).toBe('fail');
    expect(r.hint).toContain('gatehouse init');
    expect((await dataDirCheck.run(ctxFor())).status).toBe('ok');
  });
});
