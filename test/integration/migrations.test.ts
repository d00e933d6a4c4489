import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext, type AppContext } from '../../src/app-context.js';
import { registry } from '../../modules/index.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log/logger.js';
import { BACKEND, provisionPg, type ProvisionedBackend } from '../helpers/backend.js';
import { TEST_ENV } from '../helpers/test-app.js';

let app: AppContext;
let dir: string;
let pg: ProvisionedBackend | null = null;

async function tables(): Promise<string[]> {
  const names = await app.sequelize.getQueryInterface().showAllTables();
  return names.map((n) => (typeof n === 'string' ? n : (n as { tableName: string }).tableName)).sort();
}

/** The admin list's indexes: the search's trigram index (on users.search_text) on PostgreSQL only. */
const LIST_INDEXES = ['users_list_created_at', 'users_list_email', 'users_list_name', ...(BACKEND === 'pg' ? ['users_search_trgm'] : [])];
/** The per-column trigram indexes the search column replaced. */
const REPLACED_INDEXES = ['users_email_trgm', 'users_name_trgm', 'users_last_name_trgm', 'users_user_name_trgm'];

async function userIndexes(): Promise<string[]> {
  const sql =
    BACKEND === 'pg'
      ? "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'users'"
      : "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'users'";
  const [rows] = (await app.sequelize.query(sql)) as [{ name: string }[], unknown];
  return rows.map((r) => r.name);
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gh-mig-'));
  if (BACKEND === 'pg') pg = await provisionPg();
  const config = loadConfig({ env: { ...TEST_ENV, GATEHOUSE_DATA_DIR: dir, ...(pg?.env ?? {}) }, skipFile: true });
  app = await createAppContext(config, { logger: createLogger('silent'), moduleRegistry: registry, coreRoutes });
});
afterAll(async () => {
  await app?.close();
  await pg?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`core migrations on ${BACKEND}`, () => {
  it('when the database is fresh, then the plan lists every core migration and a dry-run changes nothing', async () => {
    const plan = await app.migrator.plan();
    expect(plan.map((p) => p.id)).toEqual([
      'core/20261121-0900-create-users',
      'core/20261121-0901-create-sessions',
      'core/20261121-0902-create-system-tables',
      'core/20261121-0903-add-session-device-id',
      'core/20261123-1000-add-user-list-indexes',
      'core/20261124-2000-create-user-accounts',
      'core/20261126-1200-create-audit-events',
      'core/20261126-1300-create-webhooks',
      'core/20261126-1400-create-oidc',
      'core/20261126-1410-add-session-sign-in-method',
      'core/20261127-0900-add-user-search-text',
      'core/20261207-1000-create-oidc-resources',
      'core/20261207-1010-add-session-amr',
      'core/20261207-1020-add-session-signed-in-at',
      'core/20261207-1100-add-webhook-endpoint-kind',
      'core/20261207-2345-add-user-password-expires-at',
    ]);
    const dry = await app.migrator.dryRun();
    expect(dry).toHaveLength(16);
    expect(dry[0].sql.join('\n')).toMatch(/CREATE TABLE.*users/i);
    expect(await tables()).not.toContain('users');
    expect(await app.migrator.plan()).toHaveLength(16);
  });

  it('when migrated up, down and up again, then the schema comes back whole', async () => {
    const progress: string[] = [];
    await app.migrator.apply({ onProgress: (m, i, n) => progress.push(`${i + 1}/${n} ${m.name}`) });
    expect(progress).toHaveLength(16);
    expect(await userIndexes()).toEqual(expect.arrayContaining(LIST_INDEXES));
    for (const old of REPLACED_INDEXES) expect(await userIndexes()).not.toContain(old);
    expect(await tables()).toEqual(
      expect.arrayContaining([
        'users',
        'sessions',
        'module_state',
        'settings',
        'job_runs',
        'auth_tokens',
        'user_accounts',
        'audit_events',
        'webhook_endpoints',
        'webhook_messages',
        'webhook_deliveries',
        'oidc_artefacts',
        'oidc_clients',
        'oidc_keys',
        'oidc_resources',
      ]),
    );
    expect(await app.migrator.plan()).toEqual([]);

    const reverted = await app.migrator.down('core');
    expect(reverted).toHaveLength(16);
    const after = await tables();
    for (const t of [
      'users',
      'sessions',
      'module_state',
      'settings',
      'job_runs',
      'auth_tokens',
      'user_accounts',
      'audit_events',
      'webhook_endpoints',
      'webhook_messages',
      'webhook_deliveries',
      'oidc_artefacts',
      'oidc_clients',
      'oidc_keys',
      'oidc_resources',
    ])
      expect(after).not.toContain(t);
    expect(await app.migrator.plan()).toHaveLength(16);

    await app.migrator.apply();
    expect(await tables()).toEqual(expect.arrayContaining(['users', 'sessions', 'auth_tokens']));
    expect(await app.migrator.executed()).toHaveLength(16);
    expect(await userIndexes()).toEqual(expect.arrayContaining(LIST_INDEXES));
  });

  it('when a migration fails in an atomic run, then nothing of the run remains', async () => {
    const { createMigrator } = await import('../../src/data/migrator.js');
    const failing = createMigrator(app.sequelize, () => [
      {
        id: 'broken',
        migrations: [
          {
            name: '001-ok',
            up: async ({ queryInterface, transaction }) => {
              await queryInterface.sequelize.query('CREATE TABLE broken_a (id INTEGER PRIMARY KEY)', { transaction });
            },
            down: async () => {},
          },
          {
            name: '002-fails',
            up: async ({ queryInterface, transaction }) => {
              await queryInterface.sequelize.query('CREATE TABLE broken_b (id INTEGER PRIMARY KEY, bad nonsense_type(', { transaction });
            },
            down: async () => {},
          },
        ],
      },
    ]);
    await expect(failing.apply({ atomic: true })).rejects.toThrow();
    expect(await tables()).not.toContain('broken_a');
    expect((await failing.plan()).map((p) => p.name)).toEqual(['001-ok', '002-fails']);
  });
});
