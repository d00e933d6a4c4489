import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';

let t: TestApp;
let gated: TestApp;
let closed: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  gated = await startTestApp({ env: { REGISTRATION_REQUIRES_BRIDGE_SECRET: 'true', REQUIRE_EMAIL_VERIFICATION: 'true' } });
  closed = await startTestApp({ env: { REGISTRATION_ENABLED: 'false' } });
});
afterAll(async () => {
  await t?.close();
  await gated?.close();
  await closed?.close();
});

const register = (app: TestApp, body: Record<string, unknown>, bridge = false) => app.request('POST', '/auth/register/public', { body, bridge });

describe('POST /auth/register/public', () => {
  it('when a camelCase body claims admin, then a customer is created with a working session', async () => {
    const email = uniqueEmail('reg');
    const r = await register(t, {
      email,
      password: DEFAULT_PASSWORD,
      name: 'Ana',
      lastName: 'Ruiz',
      userName: `ana_${Date.now()}`,
      userType: 'admin',
      user_type: 'superadmin',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'Registration successful' });
    const { data } = r.body;
    expect(data.user).toMatchObject({ email, name: 'Ana', last_name: 'Ruiz', user_type: 'customer', is_verified: false });
    expect(data.session_id).toBe(data.sessionId);
    expect(data.expires_at).toBe(data.expiresAt);
    expect(r.headers.getSetCookie().some((c) => c.startsWith(`session_id=${data.sessionId}`))).toBe(true);
    const me = await t.request('GET', '/auth/me', { session: data.sessionId });
    expect(me.body.data.user).toMatchObject({ email, user_type: 'customer' });
  });

  it('when a snake_case body with phone and lang is sent, then the fields are stored', async () => {
    const email = uniqueEmail('reg');
    const r = await register(t, { email, password: DEFAULT_PASSWORD, name: 'Bo', last_name: 'Li', phone: '+34 600 000 000', lang: 'es' });
    expect(r.status).toBe(200);
    expect(r.body.data.user).toMatchObject({ last_name: 'Li', phone: '+34 600 000 000', lang: 'es' });
  });

  it('when handlers listen to auth.registered, then they receive the new user', async () => {
    const seen: string[] = [];
    const off = t.app.hooks.on('auth.registered', (p) => void seen.push((p.user as { email: string }).email));
    const email = uniqueEmail('reg');
    await register(t, { email, password: DEFAULT_PASSWORD });
    off();
    expect(seen).toEqual([email]);
  });

  it.each([
    ['short', 'Ab1-xyz', 'WEAK_PASSWORD', /at least 8/],
    ['over 256 characters', 'é'.repeat(257), 'PASSWORD_TOO_LONG', /256 characters/],
    ['common', 'password1', 'WEAK_PASSWORD', /too common/],
    ['built on the product name', 'Gatehouse-26', 'WEAK_PASSWORD', /name of this service/],
  ])('when the password is %s, then the answer is a clear 400', async (_label, password, code, message) => {
    const r = await register(t, { email: uniqueEmail('reg'), password });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(code);
    expect(r.body.error).toMatch(message);
  });

  it('when the password is 64 characters of a non-Latin script (128 bytes, past bcrypt’s 72), then it registers and signs in, and its first 72 bytes alone do not', async () => {
    const email = uniqueEmail('reg');
    const password = 'é'.repeat(64);
    expect((await register(t, { email, password })).status).toBe(200);
    const login = (p: string) => t.request('POST', '/auth/login', { body: { email, password: p } });
    expect((await login(password)).status).toBe(200);
    expect((await login('é'.repeat(36))).status).toBe(401);
  });

  it('when the email is malformed or missing, then the answer is 400', async () => {
    const bad = await register(t, { email: 'not-an-email', password: DEFAULT_PASSWORD });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/email/i);
    const missing = await register(t, { password: DEFAULT_PASSWORD });
    expect(missing.status).toBe(400);
  });

  it('when the email is already registered (any case), then 400 EMAIL_TAKEN says only that', async () => {
    const existing = await makeUser(t);
    const r = await register(t, { email: existing.email.toUpperCase(), password: DEFAULT_PASSWORD });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ success: false, error: 'Email already registered', code: 'EMAIL_TAKEN' });
  });

  it('when the user name is taken or malformed, then 400 USER_NAME_TAKEN / 400', async () => {
    const existing = await makeUser(t, { user_name: `taken_${Date.now()}` });
    const taken = await register(t, { email: uniqueEmail(), password: DEFAULT_PASSWORD, user_name: existing.user_name!.toUpperCase() });
    expect(taken.status).toBe(400);
    expect(taken.body.code).toBe('USER_NAME_TAKEN');
    const bad = await register(t, { email: uniqueEmail(), password: DEFAULT_PASSWORD, user_name: 'no spaces!' });
    expect(bad.status).toBe(400);
  });

  it('when registration is switched off, then 403 REGISTRATION_DISABLED', async () => {
    const r = await register(closed, { email: uniqueEmail(), password: DEFAULT_PASSWORD });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('REGISTRATION_DISABLED');
  });

  it('when the bridge secret is required and missing, then 401; with it, registration goes on', async () => {
    const without = await register(gated, { email: uniqueEmail(), password: DEFAULT_PASSWORD });
    expect(without.status).toBe(401);
    const withIt = await register(gated, { email: uniqueEmail(), password: DEFAULT_PASSWORD }, true);
    expect(withIt.status).toBe(200);
  });

  it('when verification is required, then the answer asks to check the email and carries no session', async () => {
    const email = uniqueEmail('reg');
    const r = await register(gated, { email, password: DEFAULT_PASSWORD }, true);
    expect(r.body.message).toBe('Registration successful. Please check your email to verify your account.');
    expect(r.body.data.user).toMatchObject({ email, is_verified: false, requiresVerification: true });
    expect(r.body.data.sessionId).toBeUndefined();
    expect(r.headers.getSetCookie().some((c) => c.startsWith('session_id='))).toBe(false);
    const user = await gated.app.repos.users.findByEmail(email);
    expect(await gated.app.repos.sessions.listByUser(user!.id)).toHaveLength(0);
  });
});

describe('POST /auth/register (admin)', () => {
  it('when an admin posts a camelCase body, then a verified user comes back as data and data.user', async () => {
    const { token } = await makeSession(t, { user_type: 'admin' });
    const email = uniqueEmail('adm');
    const r = await t.request('POST', '/auth/register', {
      session: token,
      body: { email, password: DEFAULT_PASSWORD, name: 'W', lastName: 'Riter', userType: 'writer' },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ email, last_name: 'Riter', user_type: 'writer', is_verified: true });
    expect(r.body.data.user.id).toBe(r.body.data.id);
  });

  it('when a customer calls it with its session, then 403 and nobody is created', async () => {
    const { token } = await makeSession(t);
    const body = { email: uniqueEmail(), password: DEFAULT_PASSWORD };
    expect((await t.request('POST', '/auth/register', { session: token, body })).status).toBe(403);
    expect(await t.app.repos.users.findByEmail(body.email)).toBeNull();
  });

  it('when an admin asks for a superadmin, then 403; a superadmin may', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    const sup = await makeSession(t, { user_type: 'superadmin' });
    const body = () => ({ email: uniqueEmail(), password: DEFAULT_PASSWORD, userType: 'superadmin' });
    expect((await t.request('POST', '/auth/register', { session: admin.token, body: body() })).status).toBe(403);
    const ok = await t.request('POST', '/auth/register', { session: sup.token, body: body() });
    expect(ok.status).toBe(200);
    expect(ok.body.data.user_type).toBe('superadmin');
  });

  it('when the body has an unknown field or a bad type, then 400', async () => {
    const { token } = await makeSession(t, { user_type: 'admin' });
    const a = await t.request('POST', '/auth/register', { session: token, body: { email: uniqueEmail(), password: DEFAULT_PASSWORD, role: 'x' } });
    const b = await t.request('POST', '/auth/register', { session: token, body: { email: uniqueEmail(), userType: 'root' } });
    expect(a.status).toBe(400);
    expect(b.status).toBe(400);
  });
});

describe("POST /auth/register without a session (the original client's register())", () => {
  const clientBody = () => ({
    email: uniqueEmail('cli'),
    password: DEFAULT_PASSWORD,
    name: 'Cy',
    lastName: 'Lent',
    userType: 'admin',
    userName: `cy_${Date.now()}`,
  });

  it('when the client posts its camelCase body, then a customer is registered: data.id, data.user and a working session', async () => {
    const body = clientBody();
    const r = await t.request('POST', '/auth/register', { body });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'Registration successful' });
    const { data } = r.body;
    expect(data.user).toMatchObject({ email: body.email, name: 'Cy', last_name: 'Lent', user_name: body.userName, user_type: 'customer', is_verified: false });
    expect(data.id).toBe(data.user.id);
    expect(data.sessionId).toEqual(expect.any(String));
    const me = await t.request('GET', '/auth/me', { session: data.sessionId });
    expect(me.body.data.user).toMatchObject({ email: body.email, user_type: 'customer' });
  });

  it('when the session sent is unknown (a stale cookie), then it is public registration too', async () => {
    const body = clientBody();
    const r = await t.request('POST', '/auth/register', { body, headers: { Cookie: 'session_id=ses_stale' } });
    expect(r.status).toBe(200);
    expect(r.body.data.user).toMatchObject({ email: body.email, user_type: 'customer' });
  });

  it('when the public rules apply, then a taken email is 400 EMAIL_TAKEN, a weak password 400, and switched-off registration 403', async () => {
    const existing = await makeUser(t);
    const dup = await t.request('POST', '/auth/register', { body: { ...clientBody(), email: existing.email } });
    expect(dup).toMatchObject({ status: 400, body: { success: false, code: 'EMAIL_TAKEN' } });
    const weak = await t.request('POST', '/auth/register', { body: { ...clientBody(), password: 'short' } });
    expect(weak).toMatchObject({ status: 400, body: { code: 'WEAK_PASSWORD' } });
    const off = await closed.request('POST', '/auth/register', { body: clientBody() });
    expect(off).toMatchObject({ status: 403, body: { code: 'REGISTRATION_DISABLED' } });
  });

  it('when the bridge secret and verification are required, then it is asked for, and the answer waits for the mail', async () => {
    const body = clientBody();
    expect((await gated.request('POST', '/auth/register', { body })).status).toBe(401);
    const r = await gated.request('POST', '/auth/register', { body, bridge: true });
    expect(r.status).toBe(200);
    expect(r.body.message).toBe('Registration successful. Please check your email to verify your account.');
    expect(r.body.data).toMatchObject({ email: body.email, user: { requiresVerification: true, is_verified: false } });
    expect(r.body.data.sessionId).toBeUndefined();
  });
});

describe('POST /auth/register limits', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ env: { RATE_LIMIT_REGISTRATION: '2/1h', RATE_LIMIT_ADMIN: '1000/1h' } });
  });
  afterAll(async () => limited?.close());

  it('when anonymous, then it spends the registration budget it shares with /auth/register/public; an admin spends the admin one', async () => {
    const body = () => ({ email: uniqueEmail('lim'), password: DEFAULT_PASSWORD });
    const a = await limited.request('POST', '/auth/register', { body: body() });
    expect(a.headers.get('x-ratelimit-limit')).toBe('2');
    expect((await limited.request('POST', '/auth/register/public', { body: body() })).status).toBe(200);
    const third = await limited.request('POST', '/auth/register', { body: body() });
    expect(third).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
    // A made-up session does not buy the admin budget: the sign-up is charged to registration as well.
    const forged = await limited.request('POST', '/auth/register', { body: body(), session: 'ses_made_up' });
    expect(forged.status).toBe(429);
    const admin = await makeSession(limited, { user_type: 'admin' });
    const created = await limited.request('POST', '/auth/register', { body: body(), session: admin.token });
    expect(created.status).toBe(200);
    expect(created.headers.get('x-ratelimit-limit')).toBe('1000');
  });
});
