import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { migrationRecords, moduleStateRows, superadmin, userColumnNames } from './module-helpers.js';

const BASE = '/api/v1/modules/install';
let t: TestApp;
let root: string;

beforeAll(async () => {
  t = await startTestApp();
  root = (await superadmin(t)).token;
});
afterAll(async () => {
  await t?.close();
});

const post = (path: string, body?: unknown, session = root) => t.request('POST', `${BASE}${path}`, { session, body: body ?? {} });
const get = (path: string, session = root) => t.request('GET', `${BASE}${path}`, { session });

describe(`module hub over HTTP (${BACKEND})`, () => {
  it('when the registry is discovered, then it lists the shipped modules with versions and descriptions, in the module envelope', async () => {
    const r = await get('/');
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.user_context).toMatchObject({ authenticated: true, user_type: 'superadmin' });
    expect(r.body.meta).toEqual({});
    const ids = r.body.data.modules.map((m: { module_id: string }) => m.module_id);
    expect(ids).toEqual(expect.arrayContaining(['ext-business', 'onboarding', 'privacy']));
    const biz = r.body.data.modules.find((m: { module_id: string }) => m.module_id === 'ext-business');
    expect(biz).toMatchObject({ module_version: '1.0.0', installed: false, installed_version: null });
    expect(biz.module_description).toMatch(/business/i);
  });

  it('when someone other than an admin asks, then the hub refuses; an admin may read but not change', async () => {
    expect((await t.request('GET', `${BASE}/status`)).status).toBe(401);
    const customer = await makeSession(t);
    expect((await get('/status', customer.token)).status).toBe(403);
    const admin = await makeSession(t, { user_type: 'admin' });
    expect((await get('/status', admin.token)).status).toBe(200);
    expect((await get('/privacy/registry', admin.token)).status).toBe(200);
    const denied = await post('/ext-business/run', {}, admin.token);
    expect(denied.status).toBe(403);
    expect((await post('/ext-business/dry-run', {}, admin.token)).status).toBe(403);
    expect(await moduleStateRows(t)).not.toContain('ext-business');
  });

  it('when a module is dry-run, then the plan shows its migrations with SQL, user fields and routes, and nothing changes', async () => {
    const before = await userColumnNames(t);
    const r = await post('/ext-business/dry-run');
    expect(r.status).toBe(200);
    const plan = r.body.data;
    expect(plan).toMatchObject({ module_id: 'ext-business', action: 'install', ok: true, installed_version: null });
    expect(plan.dry_run).toEqual({ executed: true, rolled_back: true, error: null });
    expect(plan.migrations).toHaveLength(1);
    expect(plan.migrations[0].sql.join('\n')).toMatch(/ALTER TABLE .*users.* ADD .*biz_country/i);
    expect(plan.user_fields.map((f: { name: string }) => f.name)).toEqual(
      expect.arrayContaining(['is_business', 'biz_name', 'biz_country', 'biz_state', 'biz_position', 'biz_postal_code']),
    );
    expect(plan.routes).toContainEqual({ method: 'GET', path: '/api/v1/business/countries' });
    expect(await userColumnNames(t)).toEqual(before);
    expect(await migrationRecords(t, 'ext-business')).toEqual([]);
    expect(await moduleStateRows(t)).not.toContain('ext-business');
    expect((await get('/ext-business/status')).body.data.status).toBe('not_installed');
  });

  it('when a module is run, then it is installed at once: status, columns, its routes and its user fields', async () => {
    const r = await post('/ext-business/run');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      module_id: 'ext-business',
      status: 'installed',
      enabled: true,
      installed_version: '1.0.0',
      runtime_scope: 'gatehouse-core',
    });
    expect(r.body.data.result.migrations).toEqual(['ext-business/20261121-1000-add-business-columns']);
    const migration = r.body.data.components.find((c: { component_type: string }) => c.component_type === 'migration');
    expect(migration).toMatchObject({ installed: true, status: 'applied', expected_version: '1.0.0' });
    expect(await userColumnNames(t)).toEqual(expect.arrayContaining(['biz_name', 'biz_country']));
    expect((await t.request('GET', '/api/v1/business/countries')).status).toBe(200);

    const { token } = await makeSession(t);
    const put = await t.request('PUT', '/auth/user/me', { session: token, body: { is_business: true, biz_name: 'Acme', biz_country: 'es' } });
    expect(put.status).toBe(200);
    expect(put.body.data.user).toMatchObject({ is_business: true, biz_name: 'Acme', biz_country: 'ES' });
    expect((await post('/ext-business/run')).body.code).toBe('MODULE_ALREADY_INSTALLED');
  });

  it('when a module is switched off, then its routes answer 503 MODULE_DISABLED until it is switched on', async () => {
    expect((await post('/onboarding/run')).status).toBe(200);
    const { token } = await makeSession(t);
    expect((await t.request('GET', '/api/v1/onboarding', { session: token })).status).toBe(200);
    const off = await post('/onboarding/disable');
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ status: 'disabled', enabled: false });
    const r = await t.request('GET', '/api/v1/onboarding', { session: token });
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ success: false, error: 'Module onboarding is disabled', code: 'MODULE_DISABLED' });
    expect((await post('/onboarding/enable')).body.data.status).toBe('installed');
    expect((await t.request('GET', '/api/v1/onboarding', { session: token })).status).toBe(200);
  });

  it('when a module is uninstalled without drop_data, then its data stays and a reinstall reuses it', async () => {
    const { user, token } = await makeSession(t);
    await t.request('PUT', '/auth/user/me', { session: token, body: { biz_name: 'Kept Ltd' } });
    const r = await post('/ext-business/uninstall', {});
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'not_installed', result: { data_dropped: false } });
    expect(await userColumnNames(t)).toContain('biz_name');
    const me = await t.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(me.body.user).not.toHaveProperty('biz_name');
    const refused = await t.request('PUT', '/auth/user/me', { session: token, body: { biz_name: 'X' } });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('module_not_installed');

    const plan = (await post('/ext-business/dry-run')).body.data;
    expect(plan.ok).toBe(true);
    expect(plan.migrations).toEqual([]);
    expect(plan.reused_migrations).toEqual(['20261121-1000-add-business-columns']);
    expect((await post('/ext-business/run')).status).toBe(200);
    const back = await t.request('GET', `/auth/admin/users/${user.id}`, { session: root });
    expect(back.body.data.user.biz_name).toBe('Kept Ltd');
  });

  it('when a module is uninstalled with drop_data, then its migrations are reverted and a fresh install works', async () => {
    const r = await post('/ext-business/uninstall', { drop_data: true });
    expect(r.status).toBe(200);
    expect(r.body.data.result).toMatchObject({ data_dropped: true, migrations: ['ext-business/20261121-1000-add-business-columns'] });
    expect(await userColumnNames(t)).not.toContain('biz_name');
    expect(await migrationRecords(t, 'ext-business')).toEqual([]);
    // Sessions survive the column drop (no table rebuild cascading into them).
    const { token } = await makeSession(t);
    expect((await t.request('GET', '/auth/validation', { session: root })).status).toBe(200);
    expect((await post('/ext-business/run')).status).toBe(200);
    expect((await t.request('PUT', '/auth/user/me', { session: token, body: { biz_state: 'Madrid' } })).status).toBe(200);
  });

  it('when another hub operation holds the lock, then a run answers 409 INSTALL_LOCKED and changes nothing', async () => {
    await t.app.models.Setting.create({ key: 'modules.install_lock', value: { holder: 'other', what: 'install other' }, updated_at: new Date() });
    try {
      const r = await post('/privacy/run');
      expect(r.status).toBe(409);
      expect(r.body.code).toBe('INSTALL_LOCKED');
      expect(await moduleStateRows(t)).not.toContain('privacy');
    } finally {
      await t.app.models.Setting.destroy({ where: { key: 'modules.install_lock' } });
    }
    expect((await post('/privacy/run')).status).toBe(200);
  });

  it('when the collection routes get {modules:[...]} or a bad selection, then they plan them together or answer 400/404', async () => {
    const plan = await post('/dry-run', { modules: ['privacy', 'onboarding'] });
    expect(plan.status).toBe(200);
    expect(plan.body.data.plans.map((p: { module_id: string }) => p.module_id)).toEqual(['onboarding', 'privacy']);
    expect(plan.body.data.ok).toBe(false);
    expect((await post('/dry-run', { module_id: 'privacy', modules: ['privacy'] })).status).toBe(400);
    const unknown = await post('/dry-run', { module_id: 'no-such-module' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('MODULE_NOT_FOUND');
    const all = await get('/status');
    const statuses = Object.fromEntries(all.body.data.modules.map((m: { module_id: string; status: string }) => [m.module_id, m.status]));
    expect(statuses).toMatchObject({ 'ext-business': 'installed', onboarding: 'installed', privacy: 'installed' });
  });

  it('when an update is asked for a current module, then the plan says it is up to date and the update changes nothing', async () => {
    const plan = await post('/privacy/update/dry-run');
    expect(plan.body.data).toMatchObject({ action: 'update', up_to_date: true, migrations: [] });
    const r = await post('/privacy/update');
    expect(r.status).toBe(200);
    expect(r.body.data.result.changed).toBe(false);
  });
});
