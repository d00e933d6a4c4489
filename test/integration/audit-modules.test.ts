import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry as shipped } from '../../modules/index.js';
import type { AuditEvent } from '../../src/audit/audit-types.js';
import { BACKEND } from '../helpers/backend.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { createTable, moduleStateRows, superadmin, tableNames, testModule } from './module-helpers.js';

const BASE = '/api/v1/modules/install';
let t: TestApp;
let root: { token: string; user: { id: string } };
let refuseFor: string | null = null;

const audited = testModule('test-audited', { migrations: [createTable('20261126-0001-create-audited', 'test_audited_items')], tables: ['test_audited_items'] });
const doomed = testModule('test-doomed', { migrations: [createTable('20261126-0001-create-doomed', 'test_doomed_items')], tables: ['test_doomed_items'] });

beforeAll(async () => {
  t = await startTestApp();
  root = await superadmin(t);
  await t.app.modules.setRegistry([...shipped, audited, doomed]);
  // A step of the event's own unit of work that fails (as a webhook outbox insert could): the change must go with it.
  t.app.services.audit.onRecord(async (e) => {
    if (refuseFor && e.details.module === refuseFor) throw new Error('outbox down');
  });
});
afterAll(async () => {
  await t?.close();
});

const post = (path: string, requestId: string, body: unknown = {}) =>
  t.request('POST', `${BASE}${path}`, { session: root.token, body, headers: { 'X-Request-ID': requestId } });
async function moduleEvents(module: string): Promise<AuditEvent[]> {
  const { events } = await t.app.services.audit.list({ types: ['module.*'], limit: 200 });
  return events.filter((e) => e.details.module === module).reverse();
}

describe(`module hub events (${BACKEND})`, () => {
  it('when a superadmin installs, switches off and on, and uninstalls a module over HTTP, then each step is recorded with who, where and which request', async () => {
    expect((await post('/test-audited/run', 'req-install')).status).toBe(200);
    expect((await post('/test-audited/disable', 'req-switch-off')).status).toBe(200);
    expect((await post('/test-audited/enable', 'req-switch-on')).status).toBe(200);
    // Switching on what is on changes nothing, and records nothing.
    expect((await post('/test-audited/enable', 'req-on-again')).status).toBe(200);
    expect((await post('/test-audited/uninstall', 'req-uninstall', { drop_data: false })).status).toBe(200);

    const events = await moduleEvents('test-audited');
    expect(events.map((e) => [e.type, e.request_id, e.details])).toEqual([
      ['module.installed', 'req-install', { module: 'test-audited', version: '1.0.0' }],
      ['module.toggled', 'req-switch-off', { module: 'test-audited', enabled: false }],
      ['module.toggled', 'req-switch-on', { module: 'test-audited', enabled: true }],
      ['module.uninstalled', 'req-uninstall', { module: 'test-audited', version: '1.0.0', data_kept: true }],
    ]);
    for (const e of events) {
      expect(e).toMatchObject({ outcome: 'success', actor: { id: root.user.id, user_type: 'superadmin' }, user_id: null });
      expect(e.ip).toMatch(/127\.0\.0\.1|::1/);
    }

    // The data of a module uninstalled earlier, purged later: the purge is the recorded change.
    expect((await post('/test-audited/uninstall', 'req-purge-data', { drop_data: true })).status).toBe(200);
    const purge = (await moduleEvents('test-audited')).at(-1)!;
    expect(purge).toMatchObject({
      type: 'module.uninstalled',
      request_id: 'req-purge-data',
      details: { module: 'test-audited', version: null, data_kept: false },
    });
  });

  it('when the unit of work of an install fails after its event was written, then neither the module nor the event is there', async () => {
    refuseFor = 'test-doomed';
    try {
      const r = await post('/test-doomed/run', 'req-doomed');
      expect(r.status).toBe(500);
      expect(r.body.code).toBe('MODULE_INSTALL_FAILED');
    } finally {
      refuseFor = null;
    }
    expect(await moduleStateRows(t)).not.toContain('test-doomed');
    expect(await tableNames(t)).not.toContain('test_doomed_items');
    expect(await moduleEvents('test-doomed')).toEqual([]);
    // Once the step works again, the install and its event commit together.
    expect((await post('/test-doomed/run', 'req-doomed-2')).status).toBe(200);
    expect((await moduleEvents('test-doomed')).map((e) => e.type)).toEqual(['module.installed']);
  });
});
