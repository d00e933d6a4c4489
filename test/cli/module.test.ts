import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../modules/index.js';
import { call, json, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);

afterEach(stopStartedClis);

/** "Within seconds": what a serving instance takes to notice a module change made by the CLI. */
const withinSeconds = { timeout: 6000, interval: 100 };

describe('gatehouse module', () => {
  let dir: string;
  const cli = (...args: string[]) => runCli([...args, '--data-dir', dir]);

  beforeAll(async () => {
    dir = tempDir();
    const r = await runCli(['init', '--yes', '--data-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('when list and status run on a fresh install, then they show the registry with nothing installed', async () => {
    const list = await cli('module', 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^ext-business\s+1\.0\.0\s+available\s+Business profile fields/m);
    expect(list.stdout).toMatch(/^privacy\s+1\.0\.0\s+available/m);
    const status = json(await cli('module', 'status', '--json'));
    const shown = status.modules.map((m: { module_id: string; status: string }) => `${m.module_id}:${m.status}`).sort();
    expect(shown).toEqual(registry.map((m) => `${m.id}:not_installed`).sort());
    expect(status.modules).toHaveLength(registry.length);
  });

  it('when install --dry-run runs, then it prints the plan with its SQL and changes nothing', async () => {
    const r = await cli('module', 'install', 'ext-business', '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Install ext-business 1.0.0');
    expect(r.stdout).toMatch(/ALTER TABLE .users. ADD .biz_country/);
    expect(r.stdout).toContain('user fields: is_business (boolean), biz_name (string)');
    expect(r.stdout).toContain('Dry run: nothing was changed.');
    const status = json(await cli('module', 'status', 'ext-business', '--json'));
    expect(status.modules[0]).toMatchObject({ status: 'not_installed', installed_version: null });
    expect(status.modules[0].components[0]).toMatchObject({ component_type: 'migration', installed: false, status: 'pending' });
  });

  it('when install runs while a server is up, then the server accepts the business fields within seconds, without a restart', async () => {
    const user = json(await cli('user', 'create', '--json', '--email', 'biz@example.com', '--type', 'customer'));
    const s = startCli(['serve', '--port', '0', '--data-dir', dir]);
    const url = (await s.waitFor(LISTENING))[1];
    const login = await call(url, 'POST', '/auth/login', { body: { email: 'biz@example.com', password: user.password } });
    expect(login.status).toBe(200);
    const session = login.body.sessionId as string;
    const before = await call(url, 'PUT', '/auth/user/me', { session, body: { is_business: true, biz_name: 'Acme' } });
    expect(before.body.code).toBe('module_not_installed');

    const install = await cli('module', 'install', 'ext-business', '--json');
    expect(install.code, install.stderr).toBe(0);
    expect(json(install).modules[0]).toMatchObject({ module_id: 'ext-business', status: 'installed', installed_version: '1.0.0' });
    // No question to answer and no --verbose: no plan and no task list, just the result.
    expect(install.stderr).toBe('');

    await expect
      .poll(async () => (await call(url, 'PUT', '/auth/user/me', { session, body: { is_business: true, biz_name: 'Acme' } })).status, withinSeconds)
      .toBe(200);
    const me = await call(url, 'GET', '/auth/me', { session });
    expect(me.body.data.user).toMatchObject({ is_business: true, biz_name: 'Acme' });

    expect((await cli('module', 'disable', 'ext-business')).code).toBe(0);
    await expect.poll(async () => (await call(url, 'GET', '/api/v1/business/countries')).status, withinSeconds).toBe(503);
    expect((await cli('module', 'enable', 'ext-business')).code).toBe(0);
    await expect.poll(async () => (await call(url, 'GET', '/api/v1/business/countries')).status, withinSeconds).toBe(200);
  });

  it('when install --if-missing names modules already installed, then it does nothing and succeeds; a missing one is installed', async () => {
    const again = await cli('module', 'install', 'ext-business', '--if-missing', '--yes');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('Already installed: ext-business; nothing to do.');
    const plain = await cli('module', 'install', 'ext-business', '--yes');
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('ext-business is already installed');
  });

  it('when uninstall --drop-data is run without --yes and no terminal, then it refuses; with --yes it drops the data', async () => {
    const refused = await cli('module', 'uninstall', 'ext-business', '--drop-data');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pass --yes');
    expect(json(await cli('module', 'status', 'ext-business', '--json')).modules[0].status).toBe('installed');
    const r = await cli('module', 'uninstall', 'ext-business', '--drop-data', '--yes', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(json(r).result).toMatchObject({ data_dropped: true, migrations: ['ext-business/20261121-1000-add-business-columns'] });
    const again = await cli('module', 'uninstall', 'ext-business');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Module ext-business is not installed');
  });

  it('when a module command is run through exec, then it needs the module installed and runs with its arguments', async () => {
    const notYet = await cli('module', 'exec', 'privacy:export', 'biz@example.com');
    expect(notYet.code).toBe(1);
    expect(notYet.stderr).toContain('module privacy is not installed');
    expect((await cli('module', 'install', 'privacy', '--yes')).code).toBe(0);
    const r = await cli('module', 'exec', 'privacy:export', 'biz@example.com', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(json(r).result.core.user.email).toBe('biz@example.com');
    const unknown = await cli('module', 'exec', 'privacy:nothing');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('privacy:export');
  });
});

describe('gatehouse module install --yes and status, for people', () => {
  let dir: string;
  const cli = (...args: string[]) => runCli([...args, '--data-dir', dir]);

  beforeAll(async () => {
    dir = tempDir();
    const r = await runCli(['init', '--yes', '--data-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('when install runs with --yes (the quickstart), then it says one line per module and shows neither plan nor SQL', async () => {
    const r = await cli('module', 'install', 'two-factor', 'passkeys', '--if-missing', '--yes');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toEqual(['Installed two-factor 1.0.0 (2 migrations applied)', 'Installed passkeys 1.0.0 (1 migration applied)']);
    expect(r.stderr).toBe('');

    const again = await cli('module', 'install', 'two-factor', 'passkeys', '--if-missing', '--yes');
    expect(again.stdout.trimEnd().split('\n')).toEqual(['Already installed: two-factor, passkeys; nothing to do.']);
  });

  it('when install runs with --yes --verbose, then the plan and its SQL are shown', async () => {
    const r = await cli('module', 'install', 'ext-business', '--yes', '--verbose');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Install ext-business 1.0.0');
    expect(r.stdout).toMatch(/ALTER TABLE .users. ADD .biz_country/);
    expect(r.stdout).toContain('Installed ext-business 1.0.0');
  });

  it('when status shows one module, then each migration and table is named once, after its type', async () => {
    const r = await cli('module', 'status', 'two-factor');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/✔ migration {3}\d{8}-\d{4}-create-two-factor-tables \[applied\]/);
    expect(r.stdout).toMatch(/✔ table {7}two_factor_methods \[present\]/);
    expect(r.stdout).not.toMatch(/migration\s+migration|table\s+table/);
  });
});
