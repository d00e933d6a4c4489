import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';

let t: TestApp;
let admin: { user: UserRecord; token: string };
let sup: { user: UserRecord; token: string };
let customer: string;
beforeAll(async () => {
  t = await startTestApp();
  admin = await makeSession(t, { user_type: 'admin' });
  sup = await makeSession(t, { user_type: 'superadmin' });
  customer = (await makeSession(t)).token;
});
afterAll(async () => t?.close());

const put = (id: string, body: unknown, session = admin.token, base = '/auth/admin/users') => t.request('PUT', `${base}/${id}`, { session, body });
const alive = async (token: string) => (await t.request('GET', '/auth/validation', { session: token })).status === 200;

describe('PUT /auth/admin/users/:id (and /auth/users/:id)', () => {
  it('when an admin edits plain fields (camel or snake), then they change and sessions survive', async () => {
    const { user, token } = await makeSession(t);
    await alive(token);
    const r = await put(user.id, { name: 'Edited', lastName: 'Camel', title: 'Prof', lang: 'fr', phone: '+33 1 00', is_verified: false, two_factor: false });
    expect(r.status).toBe(200);
    expect(r.body.data.user).toMatchObject({ name: 'Edited', last_name: 'Camel', title: 'Prof', lang: 'fr', is_verified: false });
    expect(await alive(token)).toBe(true);
    const me = await t.request('GET', '/auth/me', { session: token });
    expect(me.body.data.user.name).toBe('Edited');
  });

  it('when the role or the email changes, then every session of the user is revoked', async () => {
    // Only a superadmin changes a role (admin-role-authorization.test.ts); an admin changes the email.
    for (const [change, by] of [
      [{ user_type: 'writer' }, sup.token],
      [{ email: uniqueEmail('moved') }, admin.token],
    ] as const) {
      const { user, token } = await makeSession(t);
      await alive(token);
      const r = await put(user.id, change, by, '/auth/users');
      expect(r.status).toBe(200);
      expect(await alive(token)).toBe(false);
    }
  });

  it('when a user is disabled, then sessions die and login fails; enabling lets them back in', async () => {
    const { user, token } = await makeSession(t);
    expect((await put(user.id, { disabled: true })).status).toBe(200);
    expect(await alive(token)).toBe(false);
    const denied = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    expect(denied.status).toBe(401);
    expect((await put(user.id, { disabled: false })).status).toBe(200);
    const ok = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    expect(ok.status).toBe(200);
  });

  it('when an admin touches a superadmin or promotes to superadmin, then 403; a superadmin may', async () => {
    const target = await makeUser(t, { user_type: 'superadmin' });
    const plain = await makeUser(t);
    expect((await put(target.id, { name: 'x' })).status).toBe(403);
    expect((await put(plain.id, { user_type: 'superadmin' })).status).toBe(403);
    expect((await put(plain.id, { user_type: 'superadmin' }, sup.token)).status).toBe(200);
    expect((await put(target.id, { user_type: 'admin' }, sup.token)).status).toBe(200);
  });

  it('when someone changes their own role or disables themselves, then 403', async () => {
    expect((await put(admin.user.id, { user_type: 'customer' })).status).toBe(403);
    expect((await put(sup.user.id, { user_type: 'admin' }, sup.token)).status).toBe(403);
    expect((await put(admin.user.id, { disabled: true })).status).toBe(403);
  });

  it('when the email or user name is taken, then 400 with its code', async () => {
    const a = await makeUser(t, { user_name: `a_${Date.now()}` });
    const b = await makeUser(t);
    expect(await put(b.id, { email: a.email })).toMatchObject({ status: 400, body: { code: 'EMAIL_TAKEN' } });
    expect(await put(b.id, { user_name: a.user_name })).toMatchObject({ status: 400, body: { code: 'USER_NAME_TAKEN' } });
  });

  it.each([[{ email: 'bad' }], [{ user_type: 'root' }], [{ password_hash: 'x' }], [{ disabled: 'yes' }], [{ user_name: 'a' }]])(
    'when the body is %j, then 400',
    async (body) => {
      const u = await makeUser(t);
      expect((await put(u.id, body)).status).toBe(400);
    },
  );

  it('when the id is unknown, or the caller is not an admin, then 404 / 403 / 401', async () => {
    expect((await put('00000000-0000-0000-0000-000000000000', { name: 'x' })).status).toBe(404);
    const u = await makeUser(t);
    expect((await put(u.id, { name: 'x' }, customer)).status).toBe(403);
    expect((await t.request('PUT', `/auth/users/${u.id}`, { body: { name: 'x' } })).status).toBe(401);
  });
});

describe('DELETE /auth/admin/users/:id (and /auth/users/:id)', () => {
  it('when an admin deletes a user with a reason, then the row is soft-deleted, sessions die and login fails', async () => {
    const { user, token } = await makeSession(t);
    const seen: string[] = [];
    const off = t.app.hooks.on('user.deleted', (p) => void seen.push((p.user as { id: string }).id));
    const r = await t.request('DELETE', `/auth/admin/users/${user.id}`, { session: admin.token, body: { reason: 'spam' } });
    off();
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(typeof r.body.message).toBe('string');
    expect(seen).toEqual([user.id]);
    const row = await t.app.repos.users.findById(user.id, { includeDeleted: true });
    expect(row?.deleted_at).toBeTruthy();
    expect(row?.deletion_reason).toBe('spam');
    expect(await alive(token)).toBe(false);
    expect((await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } })).status).toBe(401);
    expect((await t.request('GET', `/auth/admin/users/${user.id}`, { session: admin.token })).status).toBe(404);
  });

  it('when the reason comes in the query on the alias path, then it is kept', async () => {
    const u = await makeUser(t);
    expect((await t.request('DELETE', `/auth/users/${u.id}?reason=left`, { session: admin.token })).status).toBe(200);
    expect((await t.app.repos.users.findById(u.id, { includeDeleted: true }))?.deletion_reason).toBe('left');
  });

  it('when someone deletes themselves, or an admin a superadmin, then 403', async () => {
    expect((await t.request('DELETE', `/auth/admin/users/${admin.user.id}`, { session: admin.token })).status).toBe(403);
    const target = await makeUser(t, { user_type: 'superadmin' });
    expect((await t.request('DELETE', `/auth/admin/users/${target.id}`, { session: admin.token })).status).toBe(403);
  });

  it('when the id is unknown, the reason too long, or the caller not an admin, then 404 / 400 / 403', async () => {
    expect((await t.request('DELETE', '/auth/admin/users/nope', { session: admin.token })).status).toBe(404);
    const u = await makeUser(t);
    expect((await t.request('DELETE', `/auth/admin/users/${u.id}`, { session: admin.token, body: { reason: 'r'.repeat(501) } })).status).toBe(400);
    expect((await t.request('DELETE', `/auth/admin/users/${u.id}`, { session: customer })).status).toBe(403);
  });
});

describe('admin session revocation', () => {
  it('when one session is revoked (POST …/revoke or DELETE), then only that one dies', async () => {
    const { user, token } = await makeSession(t);
    const second = (await t.app.services.sessions.create(user.id)).token;
    const third = (await t.app.services.sessions.create(user.id)).token;
    await Promise.all([alive(token), alive(second), alive(third)]);
    const rows = await t.app.repos.sessions.listByUser(user.id);
    const idOf = (tok: string) => rows.find((s) => s.session_prefix === tok.slice(0, 12))!.id;
    const a = await t.request('POST', `/auth/admin/users/${user.id}/sessions/${idOf(second)}/revoke`, { session: admin.token });
    expect(a.status).toBe(200);
    const b = await t.request('DELETE', `/auth/admin/users/${user.id}/sessions/${idOf(third)}`, { session: admin.token });
    expect(b.status).toBe(200);
    expect([await alive(token), await alive(second), await alive(third)]).toEqual([true, false, false]);
  });

  it('when all sessions are revoked, then every one dies and the count is returned', async () => {
    const { user, token } = await makeSession(t);
    await t.app.services.sessions.create(user.id);
    const r = await t.request('DELETE', `/auth/admin/users/${user.id}/sessions`, { session: admin.token });
    expect(r.body).toMatchObject({ success: true, data: { revoked: 2 } });
    expect(await alive(token)).toBe(false);
  });

  it('when the session belongs to someone else or does not exist, then 404 and nothing is revoked', async () => {
    const a = await makeSession(t);
    const b = await makeUser(t);
    const [s] = await t.app.repos.sessions.listByUser(a.user.id);
    expect((await t.request('DELETE', `/auth/admin/users/${b.id}/sessions/${s.id}`, { session: admin.token })).status).toBe(404);
    expect((await t.request('DELETE', `/auth/admin/users/${a.user.id}/sessions/unknown`, { session: admin.token })).status).toBe(404);
    expect(await alive(a.token)).toBe(true);
  });

  it("when an admin revokes a superadmin's sessions or a customer tries, then 403", async () => {
    expect((await t.request('DELETE', `/auth/admin/users/${sup.user.id}/sessions`, { session: admin.token })).status).toBe(403);
    const u = await makeUser(t);
    expect((await t.request('DELETE', `/auth/admin/users/${u.id}/sessions`, { session: customer })).status).toBe(403);
  });
});
