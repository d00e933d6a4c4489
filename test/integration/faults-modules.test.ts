import { DataTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { defineRoute } from '../../src/module-api.js';
import { registry as shippedModules } from '../../modules/index.js';
import { createTable, superadmin, testModule } from './module-helpers.js';

/**
 * Module operations racing ordinary traffic. On SQLite every writer shares one file, so a switch
 * of the hub used to fail with SQLITE_BUSY (500) while other requests wrote; and a request served
 * by a module that is being uninstalled used to end in a 500 from its missing table or column.
 */
const BASE = '/api/v1/modules/install';
let t: TestApp;
let root: string;

beforeAll(async () => {
  t = await startTestApp();
  root = (await superadmin(t)).token;
  expect((await t.request('POST', `${BASE}/privacy/run`, { session: root, body: {} })).status).toBe(200);
});
afterAll(async () => t?.close());

describe(`module operations under concurrent traffic (${BACKEND})`, () => {
  it('when modules are switched off and on while many requests write, then every answer is a success or a clear 4xx/503, never a 500', async () => {
    const users = await Promise.all(Array.from({ length: 10 }, () => makeSession(t)));
    const statuses: number[] = [];
    const writes = (async () => {
      for (let round = 0; round < 8; round++) {
        const batch = await Promise.all(users.map((u, i) => t.request('PUT', '/auth/user/me', { session: u.token, body: { name: `Round ${round} ${i}` } })));
        statuses.push(...batch.map((r) => r.status));
      }
    })();
    const switches: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await t.request('POST', `${BASE}/privacy/${i % 2 === 0 ? 'disable' : 'enable'}`, { session: root, body: {} });
      switches.push(r.status);
      expect(r.body.code ?? 'ok', JSON.stringify(r.body)).not.toBe('MODULE_INSTALL_FAILED');
    }
    await writes;
    expect(switches.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    // It settles where the last switch left it.
    const status = await t.request('GET', `${BASE}/privacy/status`, { session: root });
    expect(status.body.data.enabled).toBe(true);
  });

  it('when privacy exports race an uninstall that drops the module data, then each export is answered 200 or a clear 4xx/503, never a 500', async () => {
    const u = await makeSession(t);
    let finished = false;
    const uninstall = t.request('POST', `${BASE}/privacy/uninstall`, { session: root, body: { drop_data: true } }).finally(() => (finished = true));
    const results: Awaited<ReturnType<TestApp['request']>>[] = [];
    // Exports keep coming, three at a time, from before the uninstall starts until it has dropped the data.
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        while (!finished) results.push(await t.request('GET', '/auth/user/me/privacy/export', { session: u.token }));
      }),
    );
    expect((await uninstall).status).toBe(200);
    expect(results.length).toBeGreaterThan(10);
    const bad = results.filter((r) => r.status >= 500 && r.status !== 503);
    expect(bad.map((r) => r.body)).toEqual([]);
    for (const r of results) if (r.status !== 200) expect(r.body).toMatchObject({ success: false, code: expect.any(String) });
    // Reinstall for the next test file run in the same process.
    expect((await t.request('POST', `${BASE}/privacy/run`, { session: root, body: {} })).status).toBe(200);
  });
});

describe(`a request that outlives its module (${BACKEND})`, () => {
  it('when the module is uninstalled with its data while one of its requests runs, then that request is answered 503 MODULE_DISABLED, not 500', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const slow = testModule('test-slow', {
      migrations: [createTable('20261123-0001-create', 'test_slow_rows')],
      tables: ['test_slow_rows'],
      routes: [
        defineRoute({
          method: 'get',
          path: '/api/v1/test-slow/rows',
          auth: 'public',
          module: 'test-slow',
          async handler({ ctx }) {
            entered();
            await gate;
            const rows = await ctx.db.model('TestSlowRow', 'test_slow_rows', { id: { type: DataTypes.STRING(36), primaryKey: true } }).findAll();
            return { success: true, rows };
          },
        }),
      ],
    });
    await t.app.modules.setRegistry([...shippedModules, slow]);
    expect((await t.request('POST', `${BASE}/test-slow/run`, { session: root, body: {} })).status).toBe(200);
    const pending = t.request('GET', '/api/v1/test-slow/rows');
    await inside;
    expect((await t.request('POST', `${BASE}/test-slow/uninstall`, { session: root, body: { drop_data: true } })).status).toBe(200);
    release();
    const r = await pending;
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ success: false, code: 'MODULE_DISABLED' });
  });
});
