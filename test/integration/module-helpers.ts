import { DataTypes } from 'sequelize';
import { z } from 'zod';
import { defineRoute } from '../../src/module-api.js';
import { defineModule, type ModuleInput, type ModuleManifest } from '../../src/modules/define-module.js';
import type { MigrationDef } from '../../src/data/migration-types.js';
import { tableColumns } from '../../src/modules/hub/hub-deps.js';
import type { TestApp } from '../helpers/test-app.js';
import { makeSession } from '../helpers/factories.js';

export const superadmin = (t: TestApp) => makeSession(t, { user_type: 'superadmin' });

export async function tableNames(t: TestApp): Promise<string[]> {
  const raw = (await t.app.sequelize.getQueryInterface().showAllTables()) as unknown[];
  return raw.map((n) => (typeof n === 'string' ? n : (n as { tableName: string }).tableName));
}

export async function userColumnNames(t: TestApp): Promise<string[]> {
  return [...(await tableColumns(t.app, 'users'))];
}

export async function migrationRecords(t: TestApp, source: string): Promise<string[]> {
  const [rows] = await t.app.sequelize.query('SELECT name FROM gatehouse_migrations WHERE source = ?', { replacements: [source] });
  return (rows as { name: string }[]).map((r) => r.name);
}

export async function moduleStateRows(t: TestApp): Promise<string[]> {
  const rows = await t.app.models.ModuleState.findAll();
  return rows.map((r) => String(r.get('module_id')));
}

/** A migration creating one small table. */
export const createTable = (name: string, table: string): MigrationDef => ({
  name,
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(table, { id: { type: DataTypes.STRING(36), primaryKey: true }, label: DataTypes.STRING(50) }, { transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable(table, { transaction });
  },
});

/** A migration that always fails (after its first statement). */
export const failing = (name: string): MigrationDef => ({
  name,
  async up({ sequelize, transaction }) {
    await sequelize.query('CREATE TABLE test_half_done (id INTEGER PRIMARY KEY)', { transaction });
    throw new Error('deliberate failure');
  },
  async down() {},
});

/** A test-only module: defaults for every manifest key, one GET route answering its id. */
export function testModule(id: string, over: Partial<ModuleInput> = {}): ModuleManifest {
  return defineModule<string[]>({
    id,
    version: '1.0.0',
    description: `test module ${id}`,
    requires: [],
    config: null,
    migrations: [],
    routes: [defineRoute({ method: 'get', path: `/api/v1/${id}/ping`, auth: 'public', module: id, handler: () => ({ success: true, module: id }) })],
    hooks: [],
    jobs: [],
    emails: [],
    userFields: [],
    commands: [],
    ...over,
  });
}

export const settingsSchema = z.object({ greeting: z.string().max(20).default('hello'), limit: z.number().int().min(1).default(5) });
