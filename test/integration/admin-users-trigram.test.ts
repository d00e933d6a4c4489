import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app-context.js';
import { registry } from '../../modules/index.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log/logger.js';
import { createCheckContext } from '../../src/cli/checks/check.js';
import { searchIndexCheck } from '../../src/cli/checks/search-index.js';
import { BACKEND, uniqueTestName } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, TEST_ENV, type TestApp } from '../helpers/test-app.js';

/*
 * Admin search past the exact-count limit (ADMIN_EXACT_COUNT_LIMIT=5 here): on PostgreSQL the total
 * is then the planner's estimate (total_exact false) while the page stays exactly what the sort names;
 * SQLite always counts. On PostgreSQL, the search is served by the trigram index on users.search_text (the plan of the
 * query the app sends, captured and explained), and the migration goes on without them where pg_trgm
 * cannot be created, the doctor saying how to add them.
 */

let t: TestApp;
let admin: string;
const from = new Date('2003-01-01T00:00:00Z');
/** Names and how many users carry each: more than the 1,000 a search gathers; between 5 and 1,000; fewer than 5. */
const GROUPS = { Dense: 1100, Middle: 40, Rare: 3 } as const;
const ids: Record<string, string[]> = { Dense: [], Middle: [], Rare: [] };

beforeAll(async () => {
  t = await startTestApp({ env: { ADMIN_EXACT_COUNT_LIMIT: '5' } });
  admin = (await makeSession(t, { user_type: 'admin' })).token;
  const rows: Record<string, unknown>[] = [];
  let i = 0;
  for (const [last, n] of Object.entries(GROUPS)) {
    for (let k = 0; k < n; k++, i++) {
      const created = new Date(from.getTime() + i * 1000);
      const id = randomUUID();
      ids[last].push(id);
      rows.push({
        id,
        email: `tg.${i}.${randomUUID().slice(0, 8)}@example.test`,
        name: `Tg${i}`,
        last_name: `${last}son`,
        user_type: 'customer',
        is_verified: true,
        two_factor: false,
        first_time: true,
        metadata: '{}',
        created_at: created,
        updated_at: created,
      });
    }
  }
  const qi = t.app.sequelize.getQueryInterface();
  for (let k = 0; k < rows.length; k += 500) await qi.bulkInsert('users', rows.slice(k, k + 500));
  if (BACKEND === 'pg') await t.app.sequelize.query('ANALYZE users');
});
afterAll(async () => t?.close());

const list = async (query: string) => {
  const r = await t.request('GET', `/auth/admin/users?${query}`, { session: admin });
  expect(r.status, r.text).toBe(200);
  return r.body as { data: { users: { id: string }[]; pagination: Record<string, any> }; meta: Record<string, any> };
};
/** Newest first, as the default sort shows them. */
const newestFirst = (group: keyof typeof GROUPS) => [...ids[group]].reverse();

describe(`admin search totals past the exact-count limit (${BACKEND})`, () => {
  it('when fewer users match than the limit, then the total is exact on both backends', async () => {
    const r = await list('q=rareson');
    expect(r.meta).toMatchObject({ total: 3, total_exact: true, pages: 1, hasMore: false, next_cursor: null });
    expect(r.data.users.map((u) => u.id)).toEqual(newestFirst('Rare'));
  });

  it.each([
    ['Middle', 'middleson', 2],
    ['Dense', 'DENSESON', 3],
    ['Dense', 'denseson', 60],
  ] as const)(
    'when %s users match (q=%s, page %i), then PostgreSQL estimates the total and SQLite counts; the page is exactly the sorted matches',
    async (group, q, page) => {
      const r = await list(`q=${q}&limit=10&page=${page}`);
      if (BACKEND === 'pg') {
        expect(r.meta.total_exact).toBe(false);
        expect(r.meta.total).toBeGreaterThan(5);
      } else {
        expect(r.meta).toMatchObject({ total: GROUPS[group], total_exact: true });
      }
      expect(r.meta.pages).toBe(Math.ceil(r.meta.total / 10));
      expect(r.data.pagination).toEqual(r.meta);
      const want = newestFirst(group).slice((page - 1) * 10, page * 10);
      expect(r.data.users.map((u) => u.id)).toEqual(want);
      expect(r.meta.hasMore).toBe(page * 10 < GROUPS[group]);
    },
  );

  it('when a search past the limit is walked by cursor, then every match comes once, in order', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const r = await list(`q=middleson&limit=15${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...r.data.users.map((u) => u.id));
      expect(r.meta.page).toBe(cursor ? null : 1);
      cursor = r.meta.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(newestFirst('Middle'));
  });
});

describe(`admin search matches each field on its own, whatever the case (${BACKEND})`, () => {
  it('when a name, a user name or a case differs, then the search answers as a case-insensitive match on each column would; a text spanning two fields matches nothing', async () => {
    const id = randomUUID();
    await t.app.repos.users.create({
      id,
      email: `span.${id.slice(0, 8)}@example.test`,
      name: 'Élodie',
      last_name: 'Ñandúson',
      user_name: `élo_${id.slice(0, 6)}`,
    });
    const ids = async (q: string) => (await list(`q=${encodeURIComponent(q)}`)).data.users.map((u) => u.id);
    const like = BACKEND === 'pg' ? 'ILIKE' : 'LIKE';
    for (const q of ['ÉLODIE', 'ñandú', 'example.test', `ÉLO_${id.slice(0, 6).toUpperCase()}`]) {
      const [want] = (await t.app.sequelize.query(
        `SELECT id FROM users WHERE deleted_at IS NULL AND id = :id AND (email ${like} :p OR name ${like} :p OR last_name ${like} :p OR user_name ${like} :p)`,
        { replacements: { id, p: `%${q}%` } },
      )) as [{ id: string }[], unknown];
      expect((await ids(q)).includes(id), q).toBe(want.length === 1);
    }
    expect(await ids('Élodie')).toContain(id);
    // The stored search text joins the fields with a newline; a text holding one is matched field by field.
    expect(await ids('Élodie\nÑandú')).toEqual([]);
    expect(await ids('test\nÉlodie')).toEqual([]);
    // A changed name is found at once, the old one no more.
    await t.app.repos.users.update(id, { name: 'Zoltana' });
    expect(await ids('zoltana')).toEqual([id]);
    expect(await ids('Élodie')).not.toContain(id);
  });
});

describe.runIf(BACKEND === 'pg')('admin search on PostgreSQL: the trigram index serves it', () => {
  it("when an admin searches for one user among 30,000 by a rare part, then the planner answers the query the app sends by a bitmap scan of the search column's trigram index", async () => {
    await t.app.sequelize.query(
      `INSERT INTO users (id, email, name, last_name, user_name, user_type, is_verified, two_factor, first_time, metadata, created_at, updated_at)
       SELECT md5('tgb' || i)::uuid::text, 'bulk' || i || '@example.com', 'Name' || i, 'Last' || i, 'bulk' || i, 'customer', true, false, true, '{}',
              timestamptz '2004-01-01' + i * interval '1 second', timestamptz '2004-01-01' + i * interval '1 second'
         FROM generate_series(1, 30000) i`,
    );
    const needle = randomUUID();
    await t.app.sequelize.query(
      `INSERT INTO users (id, email, name, last_name, user_name, user_type, is_verified, two_factor, first_time, metadata, created_at, updated_at)
       VALUES ('${needle}', 'needle.zqxjv@example.test', 'Vera', 'Zqxjvson', 'zqxjv', 'customer', true, false, true, '{}', now(), now())`,
    );
    // VACUUM too: a GIN index's statistics (what the planner prices its scans by) are kept up to date by VACUUM.
    await t.app.sequelize.query('VACUUM ANALYZE users');
    const sent: string[] = [];
    const options = (t.app.sequelize as unknown as { options: { logging: unknown } }).options;
    const before = options.logging;
    options.logging = (sql: string) => sent.push(sql.replace(/^Executing \([^)]*\): /, ''));
    let r;
    try {
      r = await list('q=ZQXJV');
    } finally {
      options.logging = before;
    }
    expect(r.meta).toMatchObject({ total: 1, total_exact: true });
    expect(r.data.users.map((u) => u.id)).toEqual([needle]);
    const search = sent.find((s) => s.includes('search_text LIKE lower(') && s.startsWith('WITH m AS MATERIALIZED'));
    expect(search, sent.join('\n')).toBeDefined();
    const [rows] = (await t.app.sequelize.query(`EXPLAIN ${search}`)) as [{ 'QUERY PLAN': string }[], unknown];
    const text = rows.map((x) => x['QUERY PLAN']).join('\n');
    expect(text).toMatch(/Bitmap Index Scan on users_search_trgm/);
    expect(text).not.toMatch(/Seq Scan on users|using users_(list_)?created_at/);
  });

  it('when the table is large, then the default listing anchors are built ahead (as serve does) and its deep pages hold the offset rows', async () => {
    expect(await t.app.repos.users.warmList()).toBe(true);
    const [[want]] = (await t.app.sequelize.query(
      'SELECT array_agg(id ORDER BY created_at DESC, id DESC) AS ids FROM (SELECT id, created_at FROM users WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET 25000) s',
    )) as [{ ids: string[] }[], unknown];
    const r = await list('page=1251&limit=20');
    expect(r.data.users.map((u) => u.id)).toEqual(want.ids);
  });

  it('when nearly every user matches (q=example), then the page is the newest matches and the total an estimate', async () => {
    const r = await list('q=example&limit=5');
    expect(r.meta.total_exact).toBe(false);
    expect(r.meta.total).toBeGreaterThan(30_000);
    // The generated users are dated 2004, after every other seeded one; the admin's session user is newest of all.
    const [[newest]] = (await t.app.sequelize.query(
      "SELECT array_agg(id ORDER BY created_at DESC, id DESC) AS ids FROM (SELECT id, created_at FROM users WHERE deleted_at IS NULL AND (email ILIKE '%example%' OR name ILIKE '%example%' OR last_name ILIKE '%example%' OR user_name ILIKE '%example%') ORDER BY created_at DESC, id DESC LIMIT 5) s",
    )) as [{ ids: string[] }[], unknown];
    expect(r.data.users.map((u) => u.id)).toEqual(newest.ids);
  });

  it('when more users match than a search gathers but all of them sit past the 30,000 newer ones, then the bounded walk gives up and every match is gathered: the exact page, the total estimated', async () => {
    // Dense (1,100 users, dated 2003) now has the 30,000 generated users (2004) in front of it, newest first.
    const r = await list('q=denseson&limit=10&page=2');
    expect(r.meta).toMatchObject({ total_exact: false, pages: Math.ceil(r.meta.total / 10), hasMore: true });
    expect(r.meta.total).toBeGreaterThan(5);
    expect(r.data.users.map((u) => u.id)).toEqual(newestFirst('Dense').slice(10, 20));
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 15; i++) {
      const p = await list(`q=denseson&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...p.data.users.map((u) => u.id));
      cursor = p.meta.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(newestFirst('Dense'));
  });
});

describe.runIf(BACKEND === 'pg')('user list migration when pg_trgm cannot be created', () => {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const db = uniqueTestName('gh_t');
  const role = `${db}_owner`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-trgm-'));
  const su = async (sql: string, database?: string) => {
    const url = new URL(adminUrl);
    if (database) url.pathname = `/${database}`;
    const c = new pg.Client({ connectionString: url.toString() });
    await c.connect();
    try {
      return await c.query(sql);
    } finally {
      await c.end();
    }
  };
  afterAll(async () => {
    await su(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await su(`DROP ROLE IF EXISTS ${role}`);
    rmSync(dir, { recursive: true, force: true });
  });

  it('when the role may create tables but not extensions, then every migration applies without the trigram indexes, search works and the doctor says how to add them', async () => {
    const password = randomBytes(12).toString('hex');
    await su(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await su(`CREATE DATABASE ${db}`);
    // Tables in public, but not CREATE on the database: a trusted extension needs that.
    await su(`REVOKE CREATE ON DATABASE ${db} FROM PUBLIC`);
    await su(`GRANT CREATE, USAGE ON SCHEMA public TO ${role}`, db);
    const url = new URL(adminUrl);
    url.pathname = `/${db}`;
    url.username = role;
    url.password = password;
    const config = loadConfig({ env: { ...TEST_ENV, GATEHOUSE_DATA_DIR: dir, DATABASE_URL: url.toString() }, skipFile: true });
    const app = await createAppContext(config, { logger: createLogger('silent'), moduleRegistry: registry, coreRoutes });
    try {
      await app.migrator.apply();
      expect(await app.migrator.plan()).toEqual([]);
      const [idx] = (await app.sequelize.query("SELECT indexname AS name FROM pg_indexes WHERE tablename = 'users'")) as [{ name: string }[], unknown];
      const names = idx.map((r) => r.name);
      expect(names).toEqual(expect.arrayContaining(['users_list_created_at', 'users_list_email', 'users_list_name']));
      expect(names.filter((n) => n.endsWith('_trgm'))).toEqual([]);
      const page = await app.repos.users.list({ q: 'nobody', page: 1, limit: 20 });
      expect(page).toMatchObject({ rows: [], total: 0, totalExact: true });
      const r = await searchIndexCheck.run(createCheckContext({ config, logger: app.logger, openApp: async () => app }));
      expect(r).toMatchObject({ status: 'fail', message: expect.stringContaining('pg_trgm extension is missing') });
      expect(r.hint).toContain('CREATE EXTENSION pg_trgm;');
      expect(r.hint).toContain('CREATE INDEX users_search_trgm ON users USING gin (search_text gin_trgm_ops);');
    } finally {
      await app.close();
    }
    // The mend the doctor names, run as a superuser, makes the check pass.
    await su(`CREATE EXTENSION pg_trgm`, db);
    await su('CREATE INDEX users_search_trgm ON users USING gin (search_text gin_trgm_ops)', db);
    const again = await createAppContext(config, { logger: createLogger('silent'), moduleRegistry: registry, coreRoutes });
    try {
      const r = await searchIndexCheck.run(createCheckContext({ config, logger: again.logger, openApp: async () => again }));
      expect(r).toMatchObject({ status: 'ok' });
    } finally {
      await again.close();
    }
  });
});
