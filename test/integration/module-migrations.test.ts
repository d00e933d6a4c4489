import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../modules/index.js';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { migrationRecords, tableNames, userColumnNames } from './module-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe(`shipped module migrations up → down → up (${BACKEND})`, () => {
  for (const m of registry) {
    it(`when ${m.id} is installed, dropped and installed again, then its tables and columns come and go, and sessions survive`, async () => {
      const { token } = await makeSession(t);
      const fields = m.userFields.map((f) => f.name);
      await t.app.modules.hub.install([m.id]);
      expect(await tableNames(t)).toEqual(expect.arrayContaining(m.tables));
      expect(await userColumnNames(t)).toEqual(expect.arrayContaining(fields));
      expect(await migrationRecords(t, m.id)).toHaveLength(m.migrations.length);

      await t.app.modules.hub.uninstall(m.id, { dropData: true });
      const tables = await tableNames(t);
      for (const table of m.tables) expect(tables).not.toContain(table);
      const columns = await userColumnNames(t);
      for (const f of fields) expect(columns).not.toContain(f);
      expect(await migrationRecords(t, m.id)).toEqual([]);
      expect((await t.request('GET', '/auth/validation', { session: token })).status).toBe(200);

      await t.app.modules.hub.install([m.id]);
      expect(await tableNames(t)).toEqual(expect.arrayContaining(m.tables));
      expect(await userColumnNames(t)).toEqual(expect.arrayContaining(fields));
      expect((await t.request('GET', '/auth/validation', { session: token })).status).toBe(200);
    });
  }
});
