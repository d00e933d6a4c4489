import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';

let t: TestApp;
let admin: string;
let customer: string;
const tag = `find${Date.now().toString(36)}`;
beforeAll(async () => {
  t = await startTestApp();
  admin = (await makeSession(t, { user_type: 'admin' })).token;
  customer = (await makeSession(t)).token;
  // Five searchable users: three writers (one unverified), two customers.
  for (let i = 0; i < 5; i++) {
    await makeUser(t, {
      email: uniqueEmail(`${tag}${i}`),
      name: `N${i}`,
      user_type: i < 3 ? 'writer' : 'customer',
      is_verified: i !== 0,
      created_at: new Date(Date.now() - i * 60_000),
    });
  }
});
afterAll(async () => t?.close());

const get = (path: string, session = admin) => t.request('GET', path, { session });

describe('GET /auth/admin/users (and /auth/users)', () => {
  it('when an admin searches, then users and pagination come back in data and meta', async () => {
    const r = await get(`/auth/admin/users?q=${tag}&limit=2`);
    expect(r.status).toBe(200);
    expect(r.body.data.users).toHaveLength(2);
    expect(r.body.data.pagination).toEqual({ page: 1, limit: 2, total: 5, total_exact: true, pages: 3, hasMore: true, next_cursor: expect.any(String) });
    expect(r.body.meta).toEqual(r.body.data.pagination);
    const last = await get(`/auth/users?q=${tag}&limit=2&page=3`);
    expect(last.body.data.users).toHaveLength(1);
    expect(last.body.data.pagination.hasMore).toBe(false);
  });

  it('when filters are given in camel or snake case, then only matching users come back', async () => {
    const writers = await get(`/auth/admin/users?q=${tag}&userType=writer`);
    expect(writers.body.data.users.map((u: { user_type: string }) => u.user_type)).toEqual(['writer', 'writer', 'writer']);
    const unverified = await get(`/auth/admin/users?q=${tag}&user_type=writer&is_verified=false`);
    expect(unverified.body.data.users).toHaveLength(1);
    expect(unverified.body.data.users[0].name).toBe('N0');
  });

  it('when a sort is asked (sortBy or sort_by), then the order follows it', async () => {
    const asc = await get(`/auth/admin/users?q=${tag}&sortBy=created_at&sortOrder=ASC`);
    expect(asc.body.data.users.map((u: { name: string }) => u.name)).toEqual(['N4', 'N3', 'N2', 'N1', 'N0']);
    const desc = await get(`/auth/admin/users?q=${tag}&sort_by=name&sort_order=desc`);
    expect(desc.body.data.users[0].name).toBe('N4');
  });

  it('when the limit is over 100, then it is capped at 100', async () => {
    const r = await get('/auth/admin/users?limit=5000');
    expect(r.status).toBe(200);
    expect(r.body.data.pagination.limit).toBe(100);
  });

  it.each([['page=0'], ['limit=abc'], ['sortBy=password_hash'], ['sortOrder=sideways'], ['userType=root'], ['is_verified=maybe']])(
    'when the query has %s, then 400',
    async (qs) => {
      const r = await get(`/auth/admin/users?${qs}`);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    },
  );

  it('when a customer or nobody asks, then 403 / 401', async () => {
    expect((await get('/auth/admin/users', customer)).status).toBe(403);
    expect((await t.request('GET', '/auth/users')).status).toBe(401);
  });
});

describe('GET /auth/admin/users/:id', () => {
  it('when the user exists, then the user and their sessions (never tokens) come back', async () => {
    const { user, token } = await makeSession(t);
    const r = await get(`/auth/admin/users/${user.id}`);
    expect(r.status).toBe(200);
    expect(r.body.data.user.id).toBe(user.id);
    expect(r.body.data.sessionCount).toBe(1);
    expect(r.body.data.sessions[0]).toMatchObject({ sessionPrefix: token.slice(0, 12), ipAddress: '127.0.0.1', userAgent: 'vitest', status: 'active' });
    expect(Object.keys(r.body.data.sessions[0]).sort()).toEqual([
      'createdAt',
      'expiresAt',
      'id',
      'ipAddress',
      'lastUsedAt',
      'sessionPrefix',
      'status',
      'userAgent',
      'userDevice',
    ]);
    expect(r.text).not.toContain(token);
    expect((await get(`/auth/users/${user.id}`)).body.data.user.id).toBe(user.id);
  });

  it('when the id is unknown, malformed or a deleted user, then 404', async () => {
    const gone = await makeUser(t, { deleted_at: new Date() });
    for (const id of ['00000000-0000-0000-0000-000000000000', 'not a uuid%20at all', "1' OR '1'='1", 'x'.repeat(300), gone.id]) {
      const r = await get(`/auth/admin/users/${encodeURIComponent(id)}`);
      expect(r.status).toBe(404);
      expect(r.body.success).toBe(false);
    }
  });

  it('when a writer asks, then 403', async () => {
    const writer = await makeSession(t, { user_type: 'writer' });
    const { user } = await makeSession(t);
    expect((await get(`/auth/admin/users/${user.id}`, writer.token)).status).toBe(403);
  });
});

describe('POST /auth/admin/users (and /auth/users)', () => {
  it('when an admin creates a user, then it is verified by default and can log in', async () => {
    const email = uniqueEmail('new');
    const r = await t.request('POST', '/auth/admin/users', {
      session: admin,
      body: {
        email,
        password: DEFAULT_PASSWORD,
        name: 'New',
        last_name: 'One',
        user_name: `new_${Date.now()}`,
        user_type: 'writer',
        phone: '+1 555 0100',
        title: 'Ms',
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.user).toMatchObject({ email, user_type: 'writer', is_verified: true, title: 'Ms' });
    const login = await t.request('POST', '/auth/login', { body: { email, password: DEFAULT_PASSWORD } });
    expect(login.status).toBe(200);
  });

  it('when the starter client posts to /auth/users with lang and is_verified false, then both are kept', async () => {
    const r = await t.request('POST', '/auth/users', {
      session: admin,
      body: { email: uniqueEmail(), password: DEFAULT_PASSWORD, name: 'L', last_name: 'G', user_type: 'customer', lang: 'es', is_verified: false },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.user).toMatchObject({ lang: 'es', is_verified: false });
  });

  it('when an admin creates a superadmin, then 403; a superadmin can', async () => {
    const sup = await makeSession(t, { user_type: 'superadmin' });
    const body = () => ({ email: uniqueEmail(), password: DEFAULT_PASSWORD, user_type: 'superadmin' });
    expect((await t.request('POST', '/auth/admin/users', { session: admin, body: body() })).status).toBe(403);
    expect((await t.request('POST', '/auth/admin/users', { session: sup.token, body: body() })).status).toBe(200);
  });

  it('when the email exists, then 400 EMAIL_TAKEN; when the body is bad, then 400', async () => {
    const existing = await makeUser(t);
    const dup = await t.request('POST', '/auth/admin/users', { session: admin, body: { email: existing.email, password: DEFAULT_PASSWORD } });
    expect(dup.status).toBe(400);
    expect(dup.body.code).toBe('EMAIL_TAKEN');
    for (const body of [{ email: 'bad' }, { email: uniqueEmail(), password: 'short' }, { email: uniqueEmail(), is_verified: 'yes' }]) {
      expect((await t.request('POST', '/auth/admin/users', { session: admin, body })).status).toBe(400);
    }
  });

  it('when the route parses the body with the user service schema, then aliases, normalising and refusals hold on every path', async () => {
    const email = uniqueEmail('zed');
    const shouted = `  ${email.toUpperCase()} `;
    const ok = await t.request('POST', '/auth/admin/users', { session: admin, body: { email: shouted, password: DEFAULT_PASSWORD, lastName: 'Camel' } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.user).toMatchObject({ email, last_name: 'Camel' });
    const id = ok.body.data.user.id;

    const unknown = await t.request('POST', '/auth/admin/users', { session: admin, body: { email: uniqueEmail(), nickname: 'z' } });
    expect(unknown).toMatchObject({ status: 400, body: { success: false, code: 'VALIDATION_ERROR' } });
    expect(unknown.body.error).toContain('nickname');
    for (const [method, path] of [
      ['POST', '/auth/admin/users'],
      ['PUT', `/auth/admin/users/${id}`],
      ['POST', '/auth/register'],
    ] as const) {
      const r = await t.request(method, path, { session: admin, body: [] });
      expect(r, `${method} ${path}`).toMatchObject({ status: 400, body: { success: false, error: 'Body must be a JSON object', code: 'VALIDATION_ERROR' } });
    }
    const badEmail = await t.request('PUT', `/auth/admin/users/${id}`, { session: admin, body: { email: 'a@b' } });
    expect(badEmail).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', details: [{ field: 'email' }] } });
    const legacy = await t.request('POST', '/auth/register', { session: admin, body: { email: 'a@b', password: DEFAULT_PASSWORD } });
    expect(legacy).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', details: [{ field: 'email' }] } });
  });

  it('when a customer or nobody creates, then 403 / 401', async () => {
    const body = { email: uniqueEmail(), password: DEFAULT_PASSWORD };
    expect((await t.request('POST', '/auth/users', { session: customer, body })).status).toBe(403);
    expect((await t.request('POST', '/auth/admin/users', { body })).status).toBe(401);
  });
});
