import net from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';

let t: TestApp;
let strict: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  // Real bcrypt cost here, so the timing of unknown users vs wrong passwords can be compared.
  strict = await startTestApp({ env: { REQUIRE_EMAIL_VERIFICATION: 'true', BCRYPT_ROUNDS: '10' } });
});
afterAll(async () => {
  await t?.close();
  await strict?.close();
});

const cookieOf = (r: { headers: Headers }) => r.headers.getSetCookie().find((c) => c.startsWith('session_id=')) ?? '';

describe('POST /auth/login', () => {
  it('when email and password are right, then a session comes back in both spellings with the cookie set', async () => {
    const user = await makeUser(t);
    const r = await t.request('POST', '/auth/login', { body: { email: user.email.toUpperCase(), password: DEFAULT_PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, user: { id: user.id, email: user.email } });
    expect(r.body.sessionId).toMatch(/^ses_/);
    expect(r.body.session_id).toBe(r.body.sessionId);
    expect(r.body.expires_at).toBe(r.body.expiresAt);
    expect(new Date(r.body.expiresAt).getTime()).toBeGreaterThan(Date.now() + 6 * 86400_000);
    const cookie = cookieOf(r);
    expect(cookie).toContain(`session_id=${r.body.sessionId}`);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    const me = await t.request('GET', '/auth/me', { session: r.body.sessionId });
    expect(me.body.data.user.id).toBe(user.id);
  });

  it.each([['userName'], ['user_name'], ['username'], ['email']])('when the user name is sent as %s, then the login succeeds', async (field) => {
    const userName = `u_${Math.random().toString(36).slice(2, 10)}`;
    await makeUser(t, { user_name: userName });
    const r = await t.request('POST', '/auth/login', { body: { [field]: userName.toUpperCase(), password: DEFAULT_PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body.user.user_name).toBe(userName);
  });

  it('when the password is wrong or the user unknown, then both answer the same 401', async () => {
    const user = await makeUser(t);
    const wrong = await t.request('POST', '/auth/login', { body: { email: user.email, password: 'Wrong-Password-1' } });
    const unknown = await t.request('POST', '/auth/login', { body: { email: uniqueEmail(), password: 'Wrong-Password-1' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual({ success: false, error: 'Invalid credentials', code: 'INVALID_CREDENTIALS' });
    expect(unknown.body).toEqual(wrong.body);
  });

  it('when the user is unknown, then the answer takes about as long as for a wrong password', async () => {
    const user = await makeUser(strict);
    const time = async (email: string) => {
      const start = performance.now();
      const r = await strict.request('POST', '/auth/login', { body: { email, password: 'Wrong-Password-1' } });
      expect(r.status).toBe(401);
      return performance.now() - start;
    };
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[1];
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 3; i++) {
      wrong.push(await time(user.email));
      unknown.push(await time(uniqueEmail()));
    }
    expect(median(wrong)).toBeGreaterThan(15);
    expect(median(unknown)).toBeGreaterThan(median(wrong) * 0.5);
  });

  it('when the account is disabled or deleted, then the right password still gets the same 401', async () => {
    const disabled = await makeUser(t, { disabled_at: new Date() });
    const deleted = await makeUser(t, { deleted_at: new Date() });
    for (const u of [disabled, deleted]) {
      const r = await t.request('POST', '/auth/login', { body: { email: u.email, password: DEFAULT_PASSWORD } });
      expect(r.status).toBe(401);
      expect(r.body.error).toBe('Invalid credentials');
    }
  });

  it('when identifier or password is missing, then the answer is 400', async () => {
    const a = await t.request('POST', '/auth/login', { body: { password: 'x' } });
    const b = await t.request('POST', '/auth/login', { body: { email: 'a@b.test' } });
    expect(a.status).toBe(400);
    expect(b.status).toBe(400);
    expect(a.body.code).toBe('VALIDATION_ERROR');
  });

  it('when an account keeps failing, then it is locked with 429 and Retry-After, even for the right password', async () => {
    const user = await makeUser(t);
    for (let i = 0; i < 5; i++) {
      const r = await t.request('POST', '/auth/login', { body: { email: user.email, password: 'Wrong-Password-1' } });
      expect(r.status).toBe(401);
    }
    const locked = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('RATE_LIMITED');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('when verification is required and the email is not verified, then 403 EMAIL_NOT_VERIFIED, but only with the right password', async () => {
    const user = await makeUser(strict, { is_verified: false });
    const right = await strict.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    expect(right.status).toBe(403);
    expect(right.body).toEqual({ success: false, error: 'Email not verified', code: 'EMAIL_NOT_VERIFIED' });
    const wrong = await strict.request('POST', '/auth/login', { body: { email: user.email, password: 'Wrong-Password-1' } });
    expect(wrong.status).toBe(401);
    const verified = await makeUser(strict, { is_verified: true });
    const ok = await strict.request('POST', '/auth/login', { body: { email: verified.email, password: DEFAULT_PASSWORD } });
    expect(ok.status).toBe(200);
  });

  it('when the user has two-factor on, then a pending session answers 200 requires_2fa and reaches only pending routes', async () => {
    const user = await makeUser(t, { two_factor: true });
    const off = t.app.hooks.on('auth.two_factor.methods', (p) => {
      (p.methods as unknown[]).push({ id: 'm1', method: 'email', status: 'active' });
    });
    const r = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    off();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: false,
      requires_2fa: true,
      available_methods: [{ id: 'm1', method: 'email', status: 'active' }],
      user: { id: user.id, email: user.email },
    });
    expect(r.body.session_id).toBe(r.body.sessionId);
    expect(r.body.user.phone).toBeUndefined();
    const pending = r.body.sessionId;
    const me = await t.request('GET', '/auth/me', { session: pending });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ success: false, requires_2fa: true, sessionId: pending, available_methods: [] });
    const full = await t.request('PUT', '/auth/user/me', { session: pending, body: { name: 'X' } });
    expect(full.status).toBe(401);
    expect(full.body.code).toBe('TWO_FACTOR_REQUIRED');
  });

  it('when auth.login handlers are registered, then they get the user and the session', async () => {
    const user = await makeUser(t);
    const seen: string[] = [];
    const off = t.app.hooks.on('auth.login', (p) => void seen.push((p.user as { id: string }).id));
    await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    off();
    expect(seen).toEqual([user.id]);
  });
});

describe('POST /auth/logout', () => {
  it('when a session logs out, then it is gone at once and the cookie is cleared', async () => {
    const { token } = await makeSession(t);
    await t.request('GET', '/auth/me', { session: token });
    const r = await t.request('POST', '/auth/logout', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: 'Logged out successfully' });
    expect(cookieOf(r)).toMatch(/session_id=;|Expires=Thu, 01 Jan 1970/);
    const after = await t.request('GET', '/auth/validation', { session: token });
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('Invalid session');
  });

  it('when a backend logs a user out with the bridge secret alongside the session, then logout works too', async () => {
    const { token } = await makeSession(t);
    const r = await t.request('POST', '/auth/logout', { bridge: true, session: token });
    expect(r.status).toBe(200);
    expect((await t.request('GET', '/auth/me', { session: token })).status).toBe(401);
  });

  it('when there is no session or an unknown one, then the answer is 401', async () => {
    expect((await t.request('POST', '/auth/logout')).status).toBe(401);
    expect((await t.request('POST', '/auth/logout', { session: 'ses_nope' })).status).toBe(401);
  });
});

describe('POST /auth/login, callers who hang up', () => {
  let slow: TestApp;
  beforeAll(async () => {
    // A comparison takes a few hundred ms here, so attempts queue behind the ones being hashed.
    slow = await startTestApp({ env: { BCRYPT_ROUNDS: '12' } });
  });
  afterAll(async () => slow?.close());

  const logins = async (outcome: string) =>
    ((await slow.app.metrics.registry.getSingleMetric('gatehouse_logins_total')?.get())?.values ?? []).find((v) => v.labels.outcome === outcome)?.value ?? 0;

  it('when callers close their connections while their attempts wait for bcrypt, then those attempts are dropped unhashed and leave no trace on the accounts', async () => {
    const users = await Promise.all(Array.from({ length: 6 }, () => makeUser(slow)));
    const { port } = new URL(slow.url);
    const sockets = users.map((u) => {
      const body = JSON.stringify({ email: u.email, password: 'Wrong-Password-1' });
      const s = net.connect(Number(port), '127.0.0.1');
      s.on('error', () => undefined);
      s.write(`POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      return s;
    });
    await new Promise((r) => setTimeout(r, 150)); // every attempt has reached the hasher; the first ones are being hashed
    for (const s of sockets) s.destroy();

    await expect.poll(async () => (await logins('failure')) + (await logins('abandoned')), { timeout: 15_000 }).toBe(6);
    const hashed = await logins('failure');
    const slots = Math.min(os.availableParallelism(), 3);
    expect(hashed).toBeGreaterThanOrEqual(1);
    expect(await logins('abandoned')).toBeGreaterThanOrEqual(6 - slots);
    // Only the attempts that were checked count against their accounts: one sign_in.failed each.
    await expect.poll(async () => (await slow.app.services.audit.list({ types: ['sign_in.failed'], limit: 50 })).events.length).toBe(hashed);
    const failed = await slow.app.services.audit.list({ types: ['sign_in.failed'], limit: 50 });
    expect(failed.events.every((e) => users.some((u) => u.id === e.user_id))).toBe(true);
    // And every account still signs in.
    for (const u of users) {
      const r = await slow.request('POST', '/auth/login', { body: { email: u.email, password: DEFAULT_PASSWORD } });
      expect(r.status).toBe(200);
    }
  });
});
