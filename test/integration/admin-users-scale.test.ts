import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/*
 * The admin list's scale features on a few thousand rows: keyset cursors, deep page numbers (served
 * from anchors past the first 1,000 rows), exact and estimated totals, the created range filter.
 * Each block isolates its users by a created_at range of its own.
 */

let t: TestApp;
let admin: string;
const BULK = 2100;
const bulkFrom = new Date('2001-01-01T00:00:00Z');
const bulkTo = new Date(bulkFrom.getTime() + BULK * 1000);
const smallFrom = new Date('2002-01-01T00:00:00Z');

interface Row {
  id: string;
  email: string;
  name: string | null;
  created_at: string;
}

beforeAll(async () => {
  t = await startTestApp({ env: { ADMIN_EXACT_COUNT_LIMIT: '1000' } });
  admin = (await makeSession(t, { user_type: 'admin' })).token;
  const at = (base: Date, s: number) => new Date(base.getTime() + s * 1000);
  const user = (created: Date, i: number, extra: Record<string, unknown> = {}) => ({
    id: randomUUID(),
    email: `scale.${i}.${randomUUID().slice(0, 8)}@example.test`,
    name: `S${String(i).padStart(5, '0')}`,
    last_name: 'Scale',
    user_type: 'customer',
    is_verified: i % 3 === 0,
    two_factor: false,
    first_time: true,
    metadata: '{}',
    created_at: created,
    updated_at: created,
    ...extra,
  });
  const qi = t.app.sequelize.getQueryInterface();
  const bulk = Array.from({ length: BULK }, (_, i) => user(at(bulkFrom, i), i));
  for (let i = 0; i < bulk.length; i += 500) await qi.bulkInsert('users', bulk.slice(i, i + 500));
  // 23 users with ties on created_at (three per second) and names missing on some: cursors must still see each once.
  const small = Array.from({ length: 23 }, (_, i) => user(at(smallFrom, Math.floor(i / 3)), 90000 + i, i % 4 === 0 ? { name: null } : {}));
  await qi.bulkInsert('users', small);
});
afterAll(async () => t?.close());

const list = async (query: string) => {
  const r = await t.request('GET', `/auth/admin/users?${query}`, { session: admin });
  expect(r.status, r.text).toBe(200);
  return r.body as { data: { users: Row[]; pagination: Record<string, any> }; meta: Record<string, any> };
};
const smallRange = `created_from=${smallFrom.toISOString()}&created_to=2002-01-02`;

async function walk(query: string): Promise<Row[]> {
  const seen: Row[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const page = await list(`${query}${cursor ? `&cursor=${cursor}` : ''}`);
    seen.push(...page.data.users);
    cursor = page.data.pagination.next_cursor;
    if (!cursor) return seen;
  }
  throw new Error('cursor walk did not end');
}

describe(`admin list at scale (${BACKEND})`, () => {
  it.each([
    ['created_at', 'desc'],
    ['created_at', 'asc'],
    ['email', 'asc'],
    ['name', 'desc'],
    ['name', 'asc'],
  ])('when walked by next_cursor sorted by %s %s, then every user comes once, in order', async (sortBy, sortOrder) => {
    const all = (await list(`${smallRange}&limit=100&sortBy=${sortBy}&sortOrder=${sortOrder}`)).data.users;
    expect(all).toHaveLength(23);
    const walked = await walk(`${smallRange}&limit=4&sortBy=${sortBy}&sortOrder=${sortOrder}`);
    expect(walked.map((u) => u.id)).toEqual(all.map((u) => u.id));
    const keys = walked.map((u) => (sortBy === 'created_at' ? Date.parse(u.created_at) : (u[sortBy as 'email' | 'name'] ?? '')));
    const sorted = [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(keys).toEqual(sortOrder === 'asc' ? sorted : sorted.reverse());
  });

  it('when a cursor is given, then page is null in meta and the last page has no next_cursor', async () => {
    const first = await list(`${smallRange}&limit=20`);
    const second = await list(`${smallRange}&limit=20&cursor=${first.data.pagination.next_cursor}`);
    expect(second.meta).toMatchObject({ page: null, hasMore: false, next_cursor: null, total: 23, total_exact: true });
    expect(second.data.users).toHaveLength(3);
  });

  it('when the cursor is garbage or belongs to another sort, then 400 naming the cursor', async () => {
    const { next_cursor } = (await list(`${smallRange}&limit=2`)).data.pagination;
    for (const q of [`cursor=${next_cursor}&sortBy=email`, 'cursor=bm90LWEtY3Vyc29y', 'cursor=a.b']) {
      const r = await t.request('GET', `/auth/admin/users?${q}`, { session: admin });
      expect(r.status, q).toBe(400);
      expect(r.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', error: expect.stringContaining('cursor') });
    }
  });

  it('when pages deep past the first thousand are asked by number, then they hold what the offset names', async () => {
    const range = `created_from=${bulkFrom.toISOString()}&created_to=${bulkTo.toISOString()}`;
    const walked = await walk(`${range}&limit=100&sortBy=created_at&sortOrder=desc`);
    expect(walked).toHaveLength(BULK);
    for (const [page, limit] of [
      [30, 50],
      [21, 100],
      [11, 100],
      [42, 50],
      [3, 7],
    ]) {
      const r = await list(`${range}&limit=${limit}&page=${page}&sortBy=created_at&sortOrder=desc`);
      const from = (page - 1) * limit;
      expect(
        r.data.users.map((u) => u.id),
        `page ${page} of ${limit}`,
      ).toEqual(walked.slice(from, from + limit).map((u) => u.id));
    }
    const byName = (await list(`${range}&limit=10&page=151&sortBy=name&sortOrder=asc`)).data.users.map((u) => u.name);
    expect(byName).toEqual(Array.from({ length: 10 }, (_, i) => `S${String(1500 + i).padStart(5, '0')}`));
    const past = await list(`${range}&limit=100&page=30`);
    expect(past.data.users).toEqual([]);
  });

  it('when more users match than ADMIN_EXACT_COUNT_LIMIT, then PostgreSQL estimates (total_exact false); SQLite counts', async () => {
    const range = `created_from=${bulkFrom.toISOString()}&created_to=${bulkTo.toISOString()}`;
    const r = await list(`${range}&limit=5`);
    if (BACKEND === 'pg') {
      expect(r.meta.total_exact).toBe(false);
      expect(r.meta.total).toBeGreaterThan(1000);
    } else {
      expect(r.meta).toMatchObject({ total: BULK, total_exact: true });
    }
    const few = await list(`${range}&limit=5&verified=true&q=S0000`);
    expect(few.meta).toMatchObject({ total: 4, total_exact: true }); // S00000, S00003, S00006, S00009
  });

  it('when the created range is given in camel case or as dates, then it bounds the list; a bad date is 400', async () => {
    const r = await list(`createdFrom=${smallFrom.toISOString()}&createdTo=2002-01-01T00:00:03Z&limit=100`);
    expect(r.data.users).toHaveLength(9);
    const bad = await t.request('GET', '/auth/admin/users?created_from=yesterday', { session: admin });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/created_from/);
  });
});
