import { describe, expect, it } from 'vitest';
import { appWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { mailTo } from './flows-helpers.js';

const NEW_PASSWORD = 'Brand-New-Secret-77';
const UPDATED = { success: true, message: 'Password updated successfully' };
const CHANGED_SUBJECT = /^Your Gatehouse password was changed$/;

const { t, smtp: sink } = appWithMail();

const alive = async (session: string) => (await t.request('GET', '/auth/validation', { session })).status === 200;
const login = (email: string, password: string) => t.request('POST', '/auth/login', { body: { email, password } });
const newSession = async (userId: string) => (await t.app.services.sessions.create(userId, { ip: '127.0.0.1', userAgent: 'vitest' })).token;

describe('POST /auth/password-change/self', () => {
  it('when the current password is right, then the password changes, other sessions end and this one stays', async () => {
    const { user, token: mine } = await makeSession(t, { email: uniqueEmail('self'), lang: 'es', name: 'Ana' });
    const other = await newSession(user.id);
    const r = await t.request('POST', '/auth/password-change/self', {
      session: mine,
      body: { current_password: DEFAULT_PASSWORD, new_password: NEW_PASSWORD },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual(UPDATED);
    expect(await alive(mine)).toBe(true);
    expect(await alive(other)).toBe(false);
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
    expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(401);
    const notice = await mailTo(sink, user.email, /^Se cambió tu contraseña de Gatehouse$/);
    expect(notice.text).toContain('Ana');
  });

  it('when the current password is wrong, then 400 INVALID_CURRENT_PASSWORD and nothing changes', async () => {
    const { user, token: mine } = await makeSession(t, { email: uniqueEmail('self-wrong') });
    const other = await newSession(user.id);
    const r = await t.request('POST', '/auth/password-change/self', {
      session: mine,
      body: { current_password: 'Not-My-Password-1', new_password: NEW_PASSWORD },
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, error: 'Current password is incorrect', code: 'INVALID_CURRENT_PASSWORD' });
    expect(await alive(other)).toBe(true);
    expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(200);
  });

  it('when the current password is missing or the new one weak, then 400 and nothing changes', async () => {
    const { user, token: mine } = await makeSession(t, { email: uniqueEmail('self-bad') });
    const missing = await t.request('POST', '/auth/password-change/self', { session: mine, body: { new_password: NEW_PASSWORD } });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('VALIDATION_ERROR');
    const weak = await t.request('POST', '/auth/password-change/self', {
      session: mine,
      body: { current_password: DEFAULT_PASSWORD, new_password: 'password' },
    });
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe('WEAK_PASSWORD');
    expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(200);
  });

  it('when there is no session, then 401', async () => {
    const r = await t.request('POST', '/auth/password-change/self', { body: { current_password: DEFAULT_PASSWORD, new_password: NEW_PASSWORD } });
    expect(r.status).toBe(401);
  });
});

describe('POST /auth/password-change/admin', () => {
  it("when an admin sets a customer's password, then it changes, all their sessions end and they are told", async () => {
    const { token: admin } = await makeSession(t, { user_type: 'admin' });
    const { user, token: theirs } = await makeSession(t, { email: uniqueEmail('victim') });
    const r = await t.request('POST', '/auth/password-change/admin', { session: admin, body: { user_id: user.id, new_password: NEW_PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual(UPDATED);
    expect(await alive(theirs)).toBe(false);
    expect(await alive(admin)).toBe(true);
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
    await mailTo(sink, user.email, CHANGED_SUBJECT);
  });

  it('when an admin targets a superadmin, then 403; a superadmin may', async () => {
    const { token: admin } = await makeSession(t, { user_type: 'admin' });
    const { token: superadmin } = await makeSession(t, { user_type: 'superadmin' });
    const target = await makeUser(t, { user_type: 'superadmin' });
    const denied = await t.request('POST', '/auth/password-change/admin', { session: admin, body: { user_id: target.id, new_password: NEW_PASSWORD } });
    expect(denied.status).toBe(403);
    expect((await login(target.email, DEFAULT_PASSWORD)).status).toBe(200);
    const allowed = await t.request('POST', '/auth/password-change/admin', { session: superadmin, body: { user_id: target.id, new_password: NEW_PASSWORD } });
    expect(allowed.status).toBe(200);
    expect((await login(target.email, NEW_PASSWORD)).status).toBe(200);
  });

  it('when the user does not exist, then 404; when the caller is not an admin, then 403', async () => {
    const { token: admin } = await makeSession(t, { user_type: 'admin' });
    const missing = await t.request('POST', '/auth/password-change/admin', {
      session: admin,
      body: { user_id: '00000000-0000-4000-8000-000000000000', new_password: NEW_PASSWORD },
    });
    expect(missing.status).toBe(404);
    const { token: customer } = await makeSession(t);
    const target = await makeUser(t);
    const denied = await t.request('POST', '/auth/password-change/admin', { session: customer, body: { user_id: target.id, new_password: NEW_PASSWORD } });
    expect(denied.status).toBe(403);
    expect((await login(target.email, DEFAULT_PASSWORD)).status).toBe(200);
  });

  it('when the new password is weak or user_id missing, then 400', async () => {
    const { token: admin } = await makeSession(t, { user_type: 'admin' });
    const target = await makeUser(t);
    const weak = await t.request('POST', '/auth/password-change/admin', { session: admin, body: { user_id: target.id, new_password: '1234567' } });
    expect(weak.status).toBe(400);
    const noId = await t.request('POST', '/auth/password-change/admin', { session: admin, body: { new_password: NEW_PASSWORD } });
    expect(noId.status).toBe(400);
    expect(noId.body.code).toBe('VALIDATION_ERROR');
  });
});
