import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineRoute } from '../../src/module-api.js';
import { startScheduler } from '../../src/jobs/scheduler.js';
import { registry as shipped } from '../../modules/index.js';
import { BACKEND } from '../helpers/backend.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { createTable, failing, migrationRecords, moduleStateRows, settingsSchema, superadmin, tableNames, testModule } from './module-helpers.js';

const BASE = '/api/v1/modules/install';
let t: TestApp;
let root: string;
const post = (path: string, body: unknown = {}) => t.request('POST', `${BASE}${path}`, { session: root, body });

const calls: string[] = [];
const broken = testModule('test-broken', {
  migrations: [createTable('20261121-0001-create-first', 'test_broken_first'), failing('20261121-0002-then-fail')],
  tables: ['test_broken_first', 'test_half_done'],
});
const base = testModule('test-base', {
  migrations: [createTable('20261121-0001-create-base', 'test_base_items')],
  tables: ['test_base_items'],
  config: settingsSchema,
  hooks: [{ event: 'test.ping', handler: (p) => void calls.push(`base:${String(p.n)}`) }],
  jobs: [{ name: 'test-base-sweep', schedule: '*/5 * * * *', run: async () => 'swept' }],
});
const child = testModule('test-child', { requires: ['test-base'] });
const clash = testModule('test-clash', {
  routes: [defineRoute({ method: 'get', path: '/health', auth: 'public', module: 'test-clash', handler: () => ({}) })],
});
const sneaky = testModule('test-sneaky', { migrations: [createTable('20261121-0001-create', 'test_undeclared')] });

beforeAll(async () => {
  t = await startTestApp();
  root = (await superadmin(t)).token;
  await t.app.modules.setRegistry([...shipped, broken, base, child, clash, sneaky]);
});
afterAll(async () => {
  await t?.close();
});

describe(`module lifecycle with test-only modules (${BACKEND})`, () => {
  it('when a migration fails during a run, then nothing is left half-installed', async () => {
    const dry = await post('/test-broken/dry-run');
    expect(dry.status).toBe(200);
    expect(dry.body.data.ok).toBe(false);
    expect(dry.body.data.dry_run.error).toMatch(/deliberate failure/);

    const r = await post('/test-broken/run');
    expect(r.status).toBe(500);
    expect(r.body.code).toBe('MODULE_INSTALL_FAILED');
    expect(r.body.error).toMatch(/nothing was changed/);
    const tables = await tableNames(t);
    expect(tables).not.toContain('test_broken_first');
    expect(tables).not.toContain('test_half_done');
    expect(await migrationRecords(t, 'test-broken')).toEqual([]);
    expect(await moduleStateRows(t)).not.toContain('test-broken');
    expect(t.app.modules.isInstalled('test-broken')).toBe(false);
    // The lock was released.
    expect((await post('/test-base/dry-run')).status).toBe(200);
  });

  it('when a module requires another that is not installed, then it is refused alone and installed together in order', async () => {
    const alone = await post('/test-child/run');
    expect(alone.status).toBe(409);
    expect(alone.body.code).toBe('MODULE_DEPENDENCY_ERROR');
    const plan = await post('/dry-run', { modules: ['test-child', 'test-base'] });
    expect(plan.body.data.plans.map((p: { module_id: string }) => p.module_id)).toEqual(['test-base', 'test-child']);
    expect(plan.body.data.plans[1].dependencies).toEqual([{ module_id: 'test-base', installed: false, included: true }]);
    const r = await post('/run', { modules: ['test-child', 'test-base'], config: { 'test-base': { greeting: 'hola' } } });
    expect(r.status).toBe(200);
    expect(r.body.data.modules).toEqual(['test-base', 'test-child']);
    expect(t.app.modules.config('test-base')).toEqual({ greeting: 'hola', limit: 5 });
    const refused = await post('/test-base/uninstall');
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('MODULE_DEPENDENCY_ERROR');
  });

  it('when settings do not fit the module config, then the install is refused with 400', async () => {
    await post('/test-child/uninstall');
    await post('/test-base/uninstall');
    const r = await post('/test-base/run', { config: { limit: 0 } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('VALIDATION_ERROR');
    expect(t.app.modules.isInstalled('test-base')).toBe(false);
  });

  it('when a module is installed, then its hooks run and its jobs are scheduled; switched off, neither', async () => {
    const scheduler = startScheduler(t.app, []);
    try {
      calls.length = 0;
      await t.app.hooks.run('test.ping', { n: 1 });
      expect(calls).toEqual([]);
      expect(scheduler.scheduled().modules ?? []).not.toContain('test-base-sweep');
      expect((await post('/test-base/run')).status).toBe(200);
      await t.app.hooks.run('test.ping', { n: 2 });
      expect(calls).toEqual(['base:2']);
      expect(scheduler.scheduled().modules).toContain('test-base-sweep');
      expect((await post('/test-base/disable')).status).toBe(200);
      await t.app.hooks.run('test.ping', { n: 3 });
      expect(calls).toEqual(['base:2']);
      expect(scheduler.scheduled().modules).not.toContain('test-base-sweep');
      expect((await post('/test-base/enable')).status).toBe(200);
    } finally {
      await scheduler.stop();
    }
  });

  it('when a newer manifest brings a migration, then the update dry-run shows it without applying it and the update applies it', async () => {
    const v2 = testModule('test-base', {
      ...base,
      version: '1.1.0',
      userFields: [],
      migrations: [...base.migrations, createTable('20261122-0001-create-extra', 'test_base_extra')],
      tables: ['test_base_items', 'test_base_extra'],
    });
    await t.app.modules.setRegistry([...shipped, broken, v2, child, clash, sneaky]);
    const listed = (await t.request('GET', `${BASE}/`, { session: root })).body.data.modules.find((m: { module_id: string }) => m.module_id === 'test-base');
    expect(listed).toMatchObject({ installed_version: '1.0.0', module_version: '1.1.0', update_available: true });

    const plan = await post('/test-base/update/dry-run');
    expect(plan.body.data).toMatchObject({ action: 'update', ok: true, up_to_date: false, installed_version: '1.0.0', module_version: '1.1.0' });
    expect(plan.body.data.migrations.map((m: { name: string }) => m.name)).toEqual(['20261122-0001-create-extra']);
    expect(plan.body.data.migrations[0].sql.join('\n')).toMatch(/CREATE TABLE.*test_base_extra/i);
    expect(await tableNames(t)).not.toContain('test_base_extra');

    const r = await post('/test-base/update');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ installed_version: '1.1.0', update_available: false });
    expect(await tableNames(t)).toContain('test_base_extra');
    // The update is in the audit record with who did it, from which version to which.
    const [updated] = (await t.app.services.audit.list({ types: ['module.updated'] })).events;
    expect(updated).toMatchObject({ actor: { user_type: 'superadmin' }, details: { module: 'test-base', from: '1.0.0', to: '1.1.0', migrations: 1 } });

    // A registry older than what is installed is no update.
    await t.app.modules.setRegistry([...shipped, broken, base, child, clash, sneaky]);
    const down = await post('/test-base/update');
    expect(down.status).toBe(409);
    expect(down.body.error).toMatch(/downgrades are not supported/);
    await t.app.modules.setRegistry([...shipped, broken, v2, child, clash, sneaky]);
  });

  it('when a module claims a core route or creates an undeclared table, then the plan names the conflict and a run is refused', async () => {
    const plan = (await post('/test-clash/dry-run')).body.data;
    expect(plan.ok).toBe(false);
    expect(plan.problems).toContainEqual({ code: 'MODULE_CONFLICT', message: 'route GET /health conflicts with core' });
    const r = await post('/test-clash/run');
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('MODULE_CONFLICT');

    const sneakyPlan = (await post('/test-sneaky/dry-run')).body.data;
    expect(sneakyPlan.ok).toBe(false);
    expect(sneakyPlan.problems[0].message).toMatch(/creates table test_undeclared, which the manifest does not declare/);
    expect(await tableNames(t)).not.toContain('test_undeclared');
  });

  it('when a module is uninstalled with its data kept, then it can be purged later with drop_data', async () => {
    expect((await post('/test-child/uninstall')).body.code).toBe('module_not_installed');
    expect((await post('/test-base/uninstall')).status).toBe(200);
    expect(await tableNames(t)).toContain('test_base_items');
    const purge = await post('/test-base/uninstall', { drop_data: true });
    expect(purge.status).toBe(200);
    expect(purge.body.data.result.migrations).toEqual(['test-base/20261122-0001-create-extra', 'test-base/20261121-0001-create-base']);
    const tables = await tableNames(t);
    expect(tables).not.toContain('test_base_items');
    expect(tables).not.toContain('test_base_extra');
  });
});
