import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { appWithMail } from '../helpers/app-with-mail.js';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/test-app.js';
import { PUBLIC_USER_FIELDS } from '../../src/services/user-view.js';
import { follow, linkIn, mailTo, mailsTo, nextMailTo, tokenIn } from './flows-helpers.js';
import { pictureForm, png } from './picture-images.js';

/**
 * Wire-contract conformance: one test per fact of docs/spec service-spec.md and client-contract.md
 * (named after the contract section), exercised over real HTTP.
 */

const RESET_SUBJECT = /^Reset your Gatehouse password$/;
const LOGIN_SUBJECT = /^Your Gatehouse sign-in link$/;
const VERIFY_SUBJECT = /^Verify your email for Gatehouse$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const NEW_PASSWORD = 'Another-Secret-88';

/**
 * `t`: core only, no module installed. `strict`: verification required, registration behind the
 * bridge secret, a tiny cache-invalidation limit.
 */
const {
  t,
  smtp,
  others: { strict },
} = appWithMail({
  env: { RESET_URL_ALLOWLIST: 'myapp://reset' },
  others: { strict: { REQUIRE_EMAIL_VERIFICATION: 'true', REGISTRATION_REQUIRES_BRIDGE_SECRET: 'true', RATE_LIMIT_CACHE_INVALIDATION: '2/1m' } },
});
/** onboarding, privacy and ext-business installed. */
let mods: TestApp;

beforeAll(async () => {
  mods = await startTestApp();
  await mods.app.modules.hub.install(['ext-business', 'onboarding', 'privacy']);
});

afterAll(async () => {
  await mods?.close();
});

function expectJson(r: TestResponse, what = ''): void {
  expect(r.headers.get('content-type') ?? '', `${what} content-type`).toMatch(/^application\/json\b/);
  expect(typeof r.body, `${what} body`).toBe('object');
}

function expectError(r: TestResponse, status: number, what = ''): void {
  expect(r.status, `${what} status`).toBe(status);
  expectJson(r, what);
  expect(r.body.success, what).toBe(false);
  expect(typeof r.body.error, `${what} error`).toBe('string');
  expect(typeof r.body.code, `${what} code`).toBe('string');
}

/** sessionId/session_id and expiresAt/expires_at present at `where`'s top level and in agreement. */
function expectBothSpellings(where: Record<string, unknown>, token?: string): void {
  expect(where.sessionId).toMatch(/^ses_/);
  expect(where.session_id).toBe(where.sessionId);
  if (token) expect(where.sessionId).toBe(token);
  expect(where.expiresAt).toMatch(ISO);
  expect(where.expires_at).toBe(where.expiresAt);
}

const login = (app: TestApp, body: Record<string, unknown>) => app.request('POST', '/auth/login', { body });
const cookieOf = (r: TestResponse) => r.headers.getSetCookie().find((c) => c.startsWith('session_id=')) ?? '';

async function pendingSession(app: TestApp) {
  const user = await makeUser(app, { two_factor: true });
  const off = app.app.hooks.on('auth.two_factor.methods', (p) => {
    (p.methods as unknown[]).push({ id: 'm-email', method: 'email', status: 'active', identifier: 'a***@example.test' });
  });
  try {
    const r = await login(app, { email: user.email, password: DEFAULT_PASSWORD });
    return { user, r, token: r.body.sessionId as string };
  } finally {
    off();
  }
}

async function resetTokenFor(email: string): Promise<string> {
  const before = mailsTo(smtp, email).length;
  expect((await t.request('POST', '/auth/password-reset/request', { body: { email } })).status).toBe(200);
  return tokenIn(await nextMailTo(smtp, email, RESET_SUBJECT, before));
}

async function loginTokenFor(email: string): Promise<string> {
  const before = mailsTo(smtp, email).length;
  const r = await t.request('POST', '/auth/token/login', { body: { identifier: email, type: 'email', redirect_url: 'myapp://reset/magic' } });
  expect(r.status).toBe(200);
  return tokenIn(await nextMailTo(smtp, email, LOGIN_SUBJECT, before));
}

describe(`wire contract: cross-cutting conventions (${BACKEND})`, () => {
  it('§1.2 when the session id comes as X-Session-ID, ?session_id= or the session_id cookie, then each is accepted', async () => {
    const { user, token } = await makeSession(t);
    const ways = [
      t.request('GET', '/auth/validation', { session: token }),
      t.request('GET', `/auth/validation?session_id=${token}`),
      t.request('GET', '/auth/validation', { headers: { Cookie: `session_id=${token}` } }),
    ];
    for (const r of await Promise.all(ways)) {
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: true, user: { id: user.id } });
    }
  });

  it('§1.3 when any route answers (success, 4xx, unknown path, refused body), then Content-Type is application/json', async () => {
    const { token } = await makeSession(t);
    const { token: customer } = await makeSession(t);
    const cases: [string, string, Parameters<TestApp['request']>[2], number][] = [
      ['GET', '/auth/me', { session: token }, 200],
      ['GET', '/auth/validation', {}, 401],
      ['GET', '/auth/user/me', { session: token }, 401],
      ['GET', '/auth/admin/users', { session: customer }, 403],
      ['GET', '/nothing-here', {}, 404],
      ['GET', '/auth/nothing-here', {}, 404],
      ['DELETE', '/auth/login', {}, 405],
      ['GET', '/uploads/pictures/missing.png', {}, 404],
      ['POST', '/api/v1/no-such-module/run', { session: token, body: {} }, 404],
      ['POST', '/auth/login', { raw: '{"email":', headers: { 'Content-Type': 'application/json' } }, 400],
      ['POST', '/auth/login', { raw: 'email=a&password=b', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }, 415],
      ['POST', '/auth/login', { raw: JSON.stringify({ email: 'x'.repeat(200_000) }), headers: { 'Content-Type': 'application/json' } }, 413],
      ['GET', '/auth/users/%E0%A4%A', { session: token }, 400],
    ];
    for (const [method, path, opts, status] of cases) {
      const r = await t.request(method, path, opts);
      expect(r.status, `${method} ${path}`).toBe(status);
      expectJson(r, `${method} ${path}`);
      if (status >= 400) expect(r.body).toMatchObject({ success: false, error: expect.any(String), code: expect.any(String) });
    }
  });

  it('§1.4 when input is invalid or conflicts, then the body is {success:false, error:<string>, code, details?}', async () => {
    const bad = await t.request('POST', '/auth/register/public', { body: { email: 'not-an-email', password: DEFAULT_PASSWORD } });
    expectError(bad, 400, 'invalid email');
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect(Array.isArray(bad.body.details)).toBe(true);
    expect(bad.body.details[0]).toMatchObject({ field: 'email', message: expect.any(String) });
    const user = await makeUser(t);
    const dup = await t.request('POST', '/auth/register/public', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    expectError(dup, 400, 'duplicate');
    expect(dup.body.code).toBe('EMAIL_TAKEN');
  });

  it('§1.4 when /auth/validation meets no session, an unknown one or a revoked one, then error is exactly "Invalid session"', async () => {
    const { token } = await makeSession(t);
    await t.request('POST', '/auth/logout', { session: token });
    for (const session of [undefined, 'ses_not_a_real_session_id_at_all_0123456789', token]) {
      const r = await t.request('GET', '/auth/validation', { session });
      expectError(r, 401);
      expect(r.body.error).toBe('Invalid session');
    }
  });

  it('§1.4 when /auth/validation meets an expired session, then error is exactly "Session expired"', async () => {
    const { user, token } = await makeSession(t);
    const [s] = await t.app.repos.sessions.listByUser(user.id);
    await t.app.repos.sessions.update(s.id, { expires_at: new Date(Date.now() - 1000) });
    const r = await t.request('GET', '/auth/validation', { session: token });
    expectError(r, 401);
    expect(r.body.error).toBe('Session expired');
  });

  it('§1.4 when verification is required and login uses an unverified account, then 403 code EMAIL_NOT_VERIFIED', async () => {
    const user = await makeUser(strict, { is_verified: false });
    const r = await login(strict, { email: user.email, password: DEFAULT_PASSWORD });
    expectError(r, 403);
    expect(r.body).toMatchObject({ error: 'Email not verified', code: 'EMAIL_NOT_VERIFIED' });
  });

  it('§1.5 when the credentials are wrong or the user unknown, then 401 with error "Invalid credentials"', async () => {
    const user = await makeUser(t);
    for (const body of [
      { email: user.email, password: 'wrong-password-1' },
      { email: uniqueEmail('nobody'), password: DEFAULT_PASSWORD },
    ]) {
      const r = await login(t, body);
      expectError(r, 401);
      expect(r.body.error).toBe('Invalid credentials');
    }
  });

  it('§1.5 when a role is missing, then 403; when the user does not exist, then 404', async () => {
    const { token: customer } = await makeSession(t);
    const { token: admin } = await makeSession(t, { user_type: 'admin' });
    expectError(await t.request('GET', '/auth/admin/users', { session: customer }), 403);
    expectError(await t.request('GET', '/auth/admin/users/00000000-0000-4000-8000-000000000000', { session: admin }), 404);
  });

  it("§1.6 when a user object is sent, then its fields are the spec's snake_case names and nothing else", async () => {
    const user = await makeUser(t);
    const r = await login(t, { email: user.email, password: DEFAULT_PASSWORD });
    expect(Object.keys(r.body.user).sort()).toEqual([...PUBLIC_USER_FIELDS].sort());
    expect(r.body.user).toMatchObject({ id: user.id, email: user.email, last_name: 'User', user_type: 'customer', is_verified: true, two_factor: false });
    expect(r.text).not.toMatch(/password_hash|\$2[aby]\$/);
  });

  it('§1.7 when login succeeds, then the session_id cookie is set HttpOnly on Path=/ with the session lifetime; logout clears it', async () => {
    const user = await makeUser(t);
    const r = await login(t, { email: user.email, password: DEFAULT_PASSWORD });
    const cookie = cookieOf(r);
    expect(cookie).toContain(`session_id=${r.body.sessionId}`);
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*Path=\//i);
    // Max-Age or Expires: either carries the lifetime (the contract's Max-Age is a suggestion).
    const lifetime = /;\s*Max-Age=(\d+)/i.exec(cookie)?.[1] ?? /;\s*Expires=([^;]+)/i.exec(cookie)?.[1];
    expect(lifetime).toBeDefined();
    const until = /^\d+$/.test(lifetime!) ? Date.now() + Number(lifetime) * 1000 : Date.parse(lifetime!);
    expect(Math.abs(until - Date.parse(r.body.expiresAt))).toBeLessThan(5000);
    const out = await t.request('POST', '/auth/logout', { headers: { Cookie: `session_id=${r.body.sessionId}`, Origin: t.app.config.publicBaseUrl } });
    expect(out.status).toBe(200);
    expect(cookieOf(out)).toMatch(/^session_id=;|Max-Age=0|Expires=Thu, 01 Jan 1970/i);
  });

  it('spec Limits when a route answers, then X-RateLimit-Limit/Remaining/Reset are integers; over the limit, 429 JSON', async () => {
    const { token } = await makeSession(strict);
    const first = await strict.request('POST', '/auth/invalidate/me', { session: token });
    expect(first.status).toBe(200);
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(first.headers.get(h), h).toMatch(/^\d+$/);
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    await strict.request('POST', '/auth/invalidate/me', { session: token });
    const over = await strict.request('POST', '/auth/invalidate/me', { session: token });
    expectError(over, 429);
    expect(over.body.code).toBe('RATE_LIMITED');
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe(`wire contract: login, logout, registration (${BACKEND})`, () => {
  it('§2.1 when login succeeds, then both sessionId and session_id are sent (and expiresAt/expires_at) with the user', async () => {
    const user = await makeUser(t);
    const r = await login(t, { email: user.email, password: DEFAULT_PASSWORD });
    expect(r.status).toBe(200);
    expectJson(r);
    expect(r.body).toMatchObject({ success: true, user: { id: user.id, email: user.email } });
    expectBothSpellings(r.body);
    expect(r.body.data).toBeUndefined();
  });

  it('§2.1 when login names the user by email (any case), userName, user_name or username, then each is accepted', async () => {
    const userName = `c_${Math.random().toString(36).slice(2, 10)}`;
    const user = await makeUser(t, { user_name: userName });
    const bodies = [{ email: `  ${user.email.toUpperCase()}` }, { userName }, { user_name: userName }, { username: userName }];
    for (const b of bodies) {
      const r = await login(t, { ...b, password: DEFAULT_PASSWORD });
      expect(r.status, JSON.stringify(b)).toBe(200);
      expect(r.body.user.id).toBe(user.id);
    }
  });

  it('§2.1/§4.2 when the user has two-factor on, then login answers HTTP 200 with success:false, requires_2fa, both id spellings and method objects', async () => {
    const { user, r, token } = await pendingSession(t);
    expect(r.status).toBe(200);
    expectJson(r);
    expect(r.body).toMatchObject({
      success: false,
      requires_2fa: true,
      message: 'Two-factor authentication required',
      session_id: token,
      available_methods: [{ id: 'm-email', method: 'email', status: 'active' }],
      user: { id: user.id, email: user.email },
    });
    expect(token).toMatch(/^ses_/);
  });

  it('§2.2 when logout is called with X-Session-ID (and the bridge secret), then 200 "Logged out successfully" and the session is dead', async () => {
    const { token } = await makeSession(t);
    const r = await t.request('POST', '/auth/logout', { session: token, bridge: true });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: 'Logged out successfully' });
    expect((await t.request('GET', '/auth/validation', { session: token })).body.error).toBe('Invalid session');
  });

  it('§2.3 when register/public gets camelCase or snake_case names, then both are stored and data carries user with session_id/sessionId and expires_at/expiresAt', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ lastName: 'Camel', userName: `cam_${Date.now() % 1e8}` }, 'lastName', 'userName'],
      [{ last_name: 'Snake', user_name: `snk_${Date.now() % 1e8}` }, 'last_name', 'user_name'],
    ];
    for (const [names, lastKey, userKey] of cases) {
      const email = uniqueEmail('reg');
      const r = await t.request('POST', '/auth/register/public', { body: { email, password: DEFAULT_PASSWORD, name: 'New', ...names } });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: true, message: 'Registration successful', data: { user: { email, name: 'New', user_type: 'customer' } } });
      expect(r.body.data.user.last_name).toBe(names[lastKey]);
      expect(r.body.data.user.user_name).toBe(names[userKey]);
      expectBothSpellings(r.body.data);
      expect((await t.request('GET', '/auth/validation', { session: r.body.data.session_id })).status).toBe(200);
    }
  });

  it('§2.3 when verification is required, then register/public answers data.user with requiresVerification and no session', async () => {
    const email = uniqueEmail('reg-verify');
    const r = await strict.request('POST', '/auth/register/public', { bridge: true, body: { email, password: DEFAULT_PASSWORD, name: 'Ver' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      message: 'Registration successful. Please check your email to verify your account.',
      data: { user: { email, is_verified: false, requiresVerification: true } },
    });
    expect(r.body.data.sessionId).toBeUndefined();
    expect(r.body.data.session_id).toBeUndefined();
  });

  it('§2.3/§4.7 when register/public requires the bridge secret, then it is refused without it and accepted with it; off by default', async () => {
    const body = () => ({ email: uniqueEmail('reg-bridge'), password: DEFAULT_PASSWORD });
    expectError(await strict.request('POST', '/auth/register/public', { body: body() }), 401);
    expect((await strict.request('POST', '/auth/register/public', { body: body(), bridge: true })).status).toBe(200);
    expect((await t.request('POST', '/auth/register/public', { body: body() })).status).toBe(200);
  });

  it('§2.3 when an admin posts camelCase to /auth/register, then data is the user (data.id) plus a data.user copy', async () => {
    const { token } = await makeSession(t, { user_type: 'admin' });
    const email = uniqueEmail('reg-admin');
    const r = await t.request('POST', '/auth/register', {
      session: token,
      body: { email, password: DEFAULT_PASSWORD, name: 'Made', lastName: 'ByAdmin', userType: 'writer' },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ email, last_name: 'ByAdmin', user_type: 'writer', is_verified: true });
    expect(r.body.data.id).toEqual(expect.any(String));
    expect(r.body.data.user).toMatchObject({ id: r.body.data.id, email });
  });
});

describe(`wire contract: current user and profile (${BACKEND})`, () => {
  it('§2.4 when GET /auth/user/me has the bridge secret and a session, then success, user, sessionId, expiresAt (both spellings) and data = flat user + user copy', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(r.status).toBe(200);
    expectJson(r);
    expect(r.body).toMatchObject({ success: true, user: { id: user.id, email: user.email } });
    expectBothSpellings(r.body, token);
    const { user: copy, ...flat } = r.body.data;
    expect(flat).toEqual(r.body.user);
    expect(copy).toEqual(r.body.user);
  });

  it('§2.4 when GET /auth/user/me carries the session as ?session_id= (as create-pubflow-rn does), then it is read from there', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('GET', `/auth/user/me?session_id=${token}&_t=${Date.now()}`, { bridge: true, headers: { 'Cache-Control': 'no-cache' } });
    expect(r.status).toBe(200);
    expect(r.body.data.id).toBe(user.id);
  });

  it('§2.4 spec when GET /auth/user/me lacks the bridge secret or the session, then 401 (both are required)', async () => {
    const { token } = await makeSession(t);
    expectError(await t.request('GET', '/auth/user/me', { session: token }), 401, 'no bridge');
    expectError(await t.request('GET', '/auth/user/me', { session: token, headers: { 'X-Bridge-Secret': 'wrong' } }), 401, 'wrong bridge');
    expectError(await t.request('GET', '/auth/user/me', { bridge: true }), 401, 'no session');
    const dead = await t.request('GET', '/auth/user/me', { bridge: true, session: 'ses_nope' });
    expectError(dead, 401, 'unknown session');
    expect(dead.body.error).toBe('Invalid session');
  });

  it('§2.4 spec when GET /auth/user/me is asked with a pending two-factor session, then HTTP 200 with requires_2fa, sessionId and expiresAt', async () => {
    const { user, token } = await pendingSession(t);
    const r = await t.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: false, requires_2fa: true, available_methods: expect.any(Array), user: { id: user.id } });
    expectBothSpellings(r.body, token);
  });

  it('§2.4 when PUT /auth/user/me gets the documented fields (empty strings clear), then 200 {success:true, data:{user}} and later reads see it', async () => {
    const { token } = await makeSession(t, { phone: '+1 555 0100', title: 'Dr' });
    const userName = `p_${Math.random().toString(36).slice(2, 10)}`;
    const body = {
      name: 'Ana',
      last_name: 'Pérez',
      user_name: userName,
      phone: '',
      dob: '1990-05-17',
      gender: 'female',
      title: '',
      reference_id: 'ref-1',
      recovery_email: 'Backup@Example.test',
      tmz: 'europe/madrid',
      metadata: { theme: 'dark' },
    };
    const r = await t.request('PUT', '/auth/user/me', { session: token, body });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      data: {
        user: {
          name: 'Ana',
          last_name: 'Pérez',
          user_name: userName,
          phone: null,
          dob: '1990-05-17',
          gender: 'female',
          title: null,
          tmz: 'Europe/Madrid',
          metadata: { theme: 'dark' },
        },
      },
    });
    const me = await t.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(me.body.user).toMatchObject({ name: 'Ana', phone: null, tmz: 'Europe/Madrid' });
    const cleared = await t.request('PUT', '/auth/user/me', { session: token, body: { metadata: null } });
    expect(cleared.body.data.user.metadata).toEqual({});
  });

  it('§2.4 when PUT /auth/user/me gets what clients echo (camelCase names, unchanged email, picture), then it is accepted', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('PUT', `/auth/user/me?session_id=${token}`, {
      session: token,
      body: { name: 'Echo', lastName: 'Camel', email: user.email.toUpperCase(), picture: 'https://elsewhere.example/x.png' },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.user).toMatchObject({ name: 'Echo', last_name: 'Camel', email: user.email, picture: null });
  });

  it('§2.4 spec when PUT /auth/user/me gets is_business or biz_* without ext-business, then 400 code module_not_installed', async () => {
    const { token } = await makeSession(t);
    for (const body of [{ is_business: true }, { biz_name: 'Acme' }]) {
      const r = await t.request('PUT', '/auth/user/me', { session: token, body });
      expectError(r, 400, JSON.stringify(body));
      expect(r.body.code).toBe('module_not_installed');
    }
  });

  it('§2.4 spec when PUT /auth/user/me gets acquisition, team_size_range or privacy fields, then 400 and nothing is stored', async () => {
    const { user, token } = await makeSession(t);
    for (const body of [{ acquisition_source: 'ads' }, { team_size_range: '1-10' }, { gdpr_consent: true }, { privacy_region: 'EU' }]) {
      expectError(await t.request('PUT', '/auth/user/me', { session: token, body: { ...body, name: 'Nope' } }), 400, JSON.stringify(body));
    }
    expect((await t.app.repos.users.findById(user.id))!.name).toBe('Test');
  });

  it('§2.4 spec when GET /auth/me is asked with a full session, then {success:true, data:{user}}', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('GET', '/auth/me', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { user: expect.objectContaining({ id: user.id, email: user.email }) } });
  });

  it('§2.4 spec when GET /auth/me has a pending session, then success:false, requires_2fa, sessionId, available_methods and user', async () => {
    const { user, token } = await pendingSession(t);
    const r = await t.request('GET', `/auth/me?session_id=${token}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: false, requires_2fa: true, sessionId: token, available_methods: expect.any(Array), user: { id: user.id } });
  });

  it('§2.4 when the older PUT /auth/profile or POST /auth/profile?session_id= is used, then it updates like PUT /auth/user/me', async () => {
    const { token } = await makeSession(t);
    const put = await t.request('PUT', '/auth/profile', { session: token, body: { name: 'Put' } });
    expect(put.body).toMatchObject({ success: true, data: { user: { name: 'Put' } } });
    const post = await t.request('POST', `/auth/profile?session_id=${token}`, { body: { name: 'Post' } });
    expect(post.body).toMatchObject({ success: true, data: { user: { name: 'Post' } } });
  });

  it('§2.4 when a picture is posted as multipart field "picture" with ?session_id=, then data.picture_url comes back; DELETE clears it', async () => {
    const { token } = await makeSession(t);
    const up = await t.request('POST', `/auth/upload/picture?session_id=${token}`, { session: token, raw: pictureForm(png(), { type: 'image/png' }) });
    expect(up.status).toBe(200);
    expectJson(up);
    expect(up.body).toMatchObject({ success: true, data: { picture_url: expect.stringMatching(/^https?:\/\/.+\.png$/) } });
    expect(up.body.data.user.picture).toBe(up.body.data.picture_url);
    const del = await t.request('DELETE', '/auth/upload/picture', { session: token });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ success: true, data: { user: { picture: null } } });
  });

  it('§2.4 when POST /auth/invalidate/me is called, then the answer carries the fresh user from the database', async () => {
    const { user, token } = await makeSession(t);
    await t.request('GET', '/auth/user/me', { session: token, bridge: true });
    await t.app.repos.users.update(user.id, { name: 'Changed Behind' });
    const r = await t.request('POST', '/auth/invalidate/me', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, data: { user: { id: user.id, name: 'Changed Behind' } } });
  });
});

describe(`wire contract: session validation and bridge (${BACKEND})`, () => {
  it('§2.5 when GET /auth/validation sees a full session, then user, session.two_factor_verified and expires_at/expiresAt come back', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('GET', '/auth/validation', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, user: { id: user.id }, session: { two_factor_verified: true } });
    expect(r.body.expiresAt).toMatch(ISO);
    expect(r.body.expires_at).toBe(r.body.expiresAt);
  });

  it('§2.5/§4.2 when GET /auth/validation sees a pending session, then HTTP 200 success:false requires_2fa with sessionId, available_methods and user', async () => {
    const { user, token } = await pendingSession(t);
    const r = await t.request('GET', '/auth/validation', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: false, requires_2fa: true, sessionId: token, available_methods: expect.any(Array), user: { id: user.id } });
  });

  it('§2.5 when the legacy client posts {sessionId} to /auth/validation, then the answer also carries data {sessionId, user, expiresAt, lastUsedAt}', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('POST', '/auth/validation', { body: { sessionId: token } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, user: { id: user.id } });
    expect(r.body.data).toMatchObject({ sessionId: token, user: { id: user.id }, expiresAt: r.body.expiresAt });
    expect(r.body.data).toHaveProperty('lastUsedAt');
  });

  it('§2.5 when GET /auth/session/current is asked, then success, sessionId, requires_2fa:false, user and expiresAt', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('GET', '/auth/session/current', { headers: { Cookie: `session_id=${token}` } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, requires_2fa: false, user: { id: user.id, email: user.email, name: 'Test' } });
    expectBothSpellings(r.body, token);
  });

  it('§2.5 when POST /auth/refresh is called, then the user with session_id/sessionId and expiresAt/expires_at comes back', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('POST', '/auth/refresh', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, user: { id: user.id } });
    expectBothSpellings(r.body, token);
  });

  it('§2.6/§4.6 when the session id arrives by query, body session_id, body sessionId or X-Session-ID, then bridge validate accepts each', async () => {
    const { user, token } = await makeSession(t);
    const ways = [
      t.request('POST', `/auth/bridge/validate?session_id=${token}`, { bridge: true, body: { timestamp: Date.now(), source: 'bridge-payments' } }),
      t.request('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: token, ip: '127.0.0.1', user_agent: 'rust', device_id: 'd1' } }),
      t.request('POST', '/auth/bridge/validate', { bridge: true, body: { sessionId: token } }),
      t.request('POST', '/auth/bridge/validate', { bridge: true, session: token, body: { validation_mode: 'standard' } }),
    ];
    for (const r of await Promise.all(ways)) {
      expect(r.status, r.text).toBe(200);
      expect(r.body).toMatchObject({ success: true, valid: true, user: { id: user.id } });
    }
  });

  it('§2.6 when bridge validate succeeds, then valid:true, user.user_type+userType, session userId/user_id and expiresAt/expires_at, cache fields', async () => {
    const { user, token } = await makeSession(t, { user_type: 'writer' });
    const r = await t.request('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: token } });
    expect(r.body).toMatchObject({
      success: true,
      valid: true,
      user: { id: user.id, email: user.email, name: 'Test', user_type: 'writer', userType: 'writer' },
      session: { userId: user.id, user_id: user.id, two_factor_verified: true },
      cached: expect.any(Boolean),
      cacheSource: expect.stringMatching(/^(ultra|unified|db)$/),
    });
    expect(r.body.session.id).toEqual(expect.any(String));
    expect(r.body.session.expires_at).toMatch(ISO);
    expect(r.body.session.expiresAt).toBe(r.body.session.expires_at);
    expect(r.body.expires_at).toBe(r.body.session.expires_at);
    expect(r.body.timestamp).toMatch(ISO);
  });

  it('§2.6 when bridge validate gets a dead session, then 401 {success:false, error:"Invalid session"}; without the secret, 401', async () => {
    const r = await t.request('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: 'ses_gone' } });
    expectError(r, 401);
    expect(r.body).toMatchObject({ error: 'Invalid session', valid: false });
    const { token } = await makeSession(t);
    expectError(await t.request('POST', '/auth/bridge/validate', { body: { session_id: token } }), 401, 'no secret');
  });
});

describe(`wire contract: password, verification, token login (${BACKEND})`, () => {
  it('§2.7 when a reset is requested (with resetUrl) for a known and an unknown address, then both answer 200 with the same body', async () => {
    const user = await makeUser(t);
    const known = await t.request('POST', '/auth/password-reset/request', { body: { email: user.email, resetUrl: 'myapp://reset' } });
    const unknown = await t.request('POST', '/auth/password-reset/request', { body: { email: uniqueEmail('ghost'), resetUrl: 'myapp://reset' } });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(known.body).toEqual(unknown.body);
    expect(known.body).toMatchObject({ success: true, message: expect.any(String) });
  });

  it('§2.7/§4.4 when a reset token is checked by POST body or GET path, then {valid:true, message:"Token is valid"}', async () => {
    const user = await makeUser(t);
    const token = await resetTokenFor(user.email);
    const post = await t.request('POST', '/auth/password-reset/validate', { body: { token } });
    const get = await t.request('GET', `/auth/password-reset/validate/${token}`);
    for (const r of [post, get]) {
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ valid: true, message: 'Token is valid' });
    }
    const bad = await t.request('GET', '/auth/password-reset/validate/not-a-token');
    expectError(bad, 400);
    expect(bad.body.valid).toBe(false);
  });

  it('§2.7/§4.4 when the reset completes with {token,password} on /complete or {token,new_password} on /reset, then both work', async () => {
    const user = await makeUser(t);
    const first = await t.request('POST', '/auth/password-reset/complete', { body: { token: await resetTokenFor(user.email), password: NEW_PASSWORD } });
    expect(first.status).toBe(200);
    expect(first.body.success).toBe(true);
    expect((await login(t, { email: user.email, password: NEW_PASSWORD })).status).toBe(200);
    const second = await t.request('POST', '/auth/password-reset/reset', { body: { token: await resetTokenFor(user.email), new_password: DEFAULT_PASSWORD } });
    expect(second.status).toBe(200);
    expect((await login(t, { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);
  });

  it('§2.7 when a user changes their password with {current_password, new_password}, then "Password updated successfully"', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('POST', '/auth/password-change/self', {
      session: token,
      body: { current_password: DEFAULT_PASSWORD, new_password: NEW_PASSWORD },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: 'Password updated successfully' });
    expect((await login(t, { email: user.email, password: NEW_PASSWORD })).status).toBe(200);
  });

  it('§2.7 when an admin posts {user_id, new_password} to password-change/admin, then the password changes', async () => {
    const { token } = await makeSession(t, { user_type: 'admin' });
    const target = await makeUser(t);
    const r = await t.request('POST', '/auth/password-change/admin', { session: token, body: { user_id: target.id, new_password: NEW_PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect((await login(t, { email: target.email, password: NEW_PASSWORD })).status).toBe(200);
  });

  it('§2.7 when resend-verification gets {email}, then 200 {success:true, message} whether or not the address exists', async () => {
    const user = await makeUser(strict, { is_verified: false });
    const known = await strict.request('POST', '/auth/resend-verification', { body: { email: user.email } });
    const unknown = await strict.request('POST', '/auth/resend-verification', { body: { email: uniqueEmail('nobody') } });
    expect(known.status).toBe(200);
    expect(known.body).toEqual(unknown.body);
    expect(known.body.success).toBe(true);
  });

  it('spec when the verification link GET /auth/token/verify is followed, then the email is verified and the user can log in', async () => {
    const user = await makeUser(strict, { is_verified: false });
    await strict.request('POST', '/auth/resend-verification', { body: { email: user.email } });
    const link = linkIn(await mailTo(smtp, user.email, VERIFY_SUBJECT));
    expect(link.pathname).toBe('/auth/token/verify');
    const r = await follow(strict, link);
    expect(r.status).toBe(200);
    expectJson(r);
    expect(r.body.success).toBe(true);
    expect((await login(strict, { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);
  });

  it('§2.8 when a token login is requested with {identifier, type:"email", redirect_url}, then "Verification email sent successfully" and token_id', async () => {
    const user = await makeUser(t);
    const r = await t.request('POST', '/auth/token/login', { body: { identifier: user.email, type: 'email', redirect_url: 'myapp://reset/magic' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'Verification email sent successfully', token_id: expect.any(String) });
  });

  it('§2.8 when the token is validated by POST {token}, then user carries camel and snake fields with sessionId and expiresAt', async () => {
    const user = await makeUser(t, { user_name: `tl_${Date.now() % 1e8}` });
    const token = await loginTokenFor(user.email);
    const r = await t.request('POST', '/auth/token/validate', { body: { token } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      message: 'Token validated successfully',
      user: {
        id: user.id,
        email: user.email,
        name: 'Test',
        lastName: 'User',
        last_name: 'User',
        userName: user.user_name,
        userType: 'customer',
        isVerified: true,
      },
    });
    expectBothSpellings(r.body);
  });

  it('§2.8 when the token is validated by GET ?token= without the bridge secret, then tokenType, token_id, expires_at and user.isVerified', async () => {
    const user = await makeUser(t);
    const token = await loginTokenFor(user.email);
    const r = await t.request('GET', `/auth/token/validate?token=${token}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      tokenType: 'login',
      token_id: expect.any(String),
      user: { id: user.id, email: user.email, name: 'Test', isVerified: true },
    });
    expect(r.body.expires_at).toMatch(ISO);
  });
});

describe(`wire contract: admin users (${BACKEND})`, () => {
  it('§2.11 when an admin lists with q, userType, page, limit, sortBy, sortOrder, then data.users and data.pagination {page,limit,total,pages}', async () => {
    const { token } = await makeSession(t, { user_type: 'admin' });
    const target = await makeUser(t, { user_type: 'writer' });
    const q = encodeURIComponent(target.email);
    const r = await t.request('GET', `/auth/admin/users?q=${q}&userType=writer&page=1&limit=20&sortBy=created_at&sortOrder=desc`, { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      data: { users: [{ id: target.id, user_type: 'writer' }], pagination: { page: 1, limit: 20, total: 1, pages: 1 } },
    });
  });

  it("§2.11 spec when an admin reads one user, then data.user, data.sessions with the spec's Session fields and sessionCount", async () => {
    const { token } = await makeSession(t, { user_type: 'admin' });
    const { user, token: theirs } = await makeSession(t);
    const r = await t.request('GET', `/auth/admin/users/${user.id}`, { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, data: { user: { id: user.id }, sessionCount: 1 } });
    expect(Object.keys(r.body.data.sessions[0]).sort()).toEqual(
      ['id', 'sessionPrefix', 'ipAddress', 'userAgent', 'userDevice', 'lastUsedAt', 'createdAt', 'expiresAt', 'status'].sort(),
    );
    expect(r.body.data.sessions[0]).toMatchObject({ ipAddress: '127.0.0.1', userAgent: 'vitest', status: 'active', expiresAt: expect.stringMatching(ISO) });
    expect(r.text).not.toContain(theirs);
  });

  it('§2.11 when a superadmin updates through PUT /auth/admin/users/:id (the role too: only a superadmin may), then {success, data:{user}}', async () => {
    const { token } = await makeSession(t, { user_type: 'superadmin' });
    const target = await makeUser(t);
    const r = await t.request('PUT', `/auth/admin/users/${target.id}`, {
      session: token,
      body: { name: 'Renamed', last_name: 'L', is_verified: false, user_type: 'writer' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, data: { user: { id: target.id, name: 'Renamed', is_verified: false, user_type: 'writer' } } });
  });

  it('§2.11 when an admin updates a superadmin or moves someone to superadmin, then 403; a superadmin may', async () => {
    const { token: admin } = await makeSession(t, { user_type: 'admin' });
    const { token: root } = await makeSession(t, { user_type: 'superadmin' });
    const top = await makeUser(t, { user_type: 'superadmin' });
    const plain = await makeUser(t);
    expectError(await t.request('PUT', `/auth/admin/users/${top.id}`, { session: admin, body: { name: 'X' } }), 403, 'edit superadmin');
    expectError(await t.request('PUT', `/auth/admin/users/${plain.id}`, { session: admin, body: { user_type: 'superadmin' } }), 403, 'promote');
    const ok = await t.request('PUT', `/auth/admin/users/${plain.id}`, { session: root, body: { userType: 'superadmin' } });
    expect(ok.body).toMatchObject({ success: true, data: { user: { user_type: 'superadmin' } } });
  });

  it('spec when POST /auth/admin/users creates a user, then data.user is verified by default; only a superadmin may create a superadmin', async () => {
    const { token: admin } = await makeSession(t, { user_type: 'admin' });
    const { token: root } = await makeSession(t, { user_type: 'superadmin' });
    const email = uniqueEmail('created');
    const r = await t.request('POST', '/auth/admin/users', {
      session: admin,
      body: { email, password: DEFAULT_PASSWORD, name: 'C', user_type: 'customer', phone: '+1 555 0101', title: 'Ms' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, data: { user: { email, is_verified: true, title: 'Ms' } } });
    const sa = { email: uniqueEmail('sa'), password: DEFAULT_PASSWORD, user_type: 'superadmin' };
    expectError(await t.request('POST', '/auth/admin/users', { session: admin, body: sa }), 403);
    expect((await t.request('POST', '/auth/admin/users', { session: root, body: sa })).status).toBe(200);
  });

  it('§2.11/§4.5 when the starter family /auth/users is used (list, create with lang, read, update, delete), then each answers like /auth/admin/users', async () => {
    const { token } = await makeSession(t, { user_type: 'admin' });
    const email = uniqueEmail('starter');
    const created = await t.request('POST', '/auth/users', {
      session: token,
      body: { name: 'S', last_name: 'T', email, user_name: `st_${Date.now() % 1e8}`, user_type: 'customer', password: DEFAULT_PASSWORD, lang: 'es' },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ success: true, data: { user: { email, lang: 'es' } } });
    const id = created.body.data.user.id;
    const list = await t.request('GET', `/auth/users?page=1&limit=5&q=${encodeURIComponent(email)}`, { session: token });
    expect(list.body.data.users.map((u: { id: string }) => u.id)).toEqual([id]);
    expect(list.body.data.pagination).toMatchObject({ page: 1, limit: 5, total: 1, pages: 1 });
    expect((await t.request('GET', `/auth/users/${id}`, { session: token })).body.data.user.id).toBe(id);
    expect((await t.request('PUT', `/auth/users/${id}`, { session: token, body: { name: 'S2' } })).body.data.user.name).toBe('S2');
    expect((await t.request('DELETE', `/auth/users/${id}`, { session: token })).body.success).toBe(true);
    expectError(await t.request('GET', `/auth/users/${id}`, { session: token }), 404);
    const bad = await t.request('POST', '/auth/users', { session: token, body: { email: 'nope', password: DEFAULT_PASSWORD } });
    expectError(bad, 400);
    expect(bad.body.details).toEqual(expect.any(Array));
  });
});

describe(`wire contract: module hub, onboarding, privacy (${BACKEND})`, () => {
  it('§2.12 when the hub is discovered at /api/v1/modules/install (with or without trailing slash), then {success, data, user_context, meta}', async () => {
    const { token } = await makeSession(t, { user_type: 'admin' });
    for (const path of ['/api/v1/modules/install', '/api/v1/modules/install/']) {
      const r = await t.request('GET', path, { session: token });
      expect(r.status, path).toBe(200);
      expect(r.body).toMatchObject({ success: true, user_context: { authenticated: true, user_type: 'admin' }, meta: {} });
      expect(r.body.data.modules.map((m: { module_id: string }) => m.module_id)).toEqual(expect.arrayContaining(['ext-business', 'onboarding', 'privacy']));
    }
  });

  it("§2.12 when a module's status is read, then module_id, module_description, runtime_scope, module_version, status and components with their fields", async () => {
    const { token } = await makeSession(mods, { user_type: 'admin' });
    const r = await mods.request('GET', '/api/v1/modules/install/onboarding/status', { session: token });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      module_id: 'onboarding',
      module_description: expect.any(String),
      runtime_scope: expect.any(String),
      module_version: expect.any(String),
      status: 'installed',
    });
    expect(r.body.data.components.length).toBeGreaterThan(0);
    for (const c of r.body.data.components) {
      expect(c).toMatchObject({
        component_id: expect.any(String),
        component_type: expect.any(String),
        description: expect.any(String),
        expected_version: expect.any(String),
        installed: true,
        status: expect.any(String),
      });
      expect(c).toHaveProperty('installed_version');
    }
    const all = await mods.request('GET', '/api/v1/modules/install/status', { session: token });
    expect(all.body.data.modules.find((m: { module_id: string }) => m.module_id === 'privacy')).toMatchObject({ status: 'installed' });
  });

  it('§2.12 when a superadmin walks registry, dry-run, run, update/dry-run and update for one module, then each answers the envelope', async () => {
    const { token } = await makeSession(t, { user_type: 'superadmin' });
    const call = (method: string, path: string, body?: unknown) => t.request(method, `/api/v1/modules/install/onboarding${path}`, { session: token, body });
    const registry = await call('GET', '/registry');
    expect(registry.body).toMatchObject({ success: true, data: { module_id: 'onboarding', installed: false } });
    const dry = await call('POST', '/dry-run', {});
    expect(dry.status).toBe(200);
    expect(dry.body.data.module_id).toBe('onboarding');
    const run = await call('POST', '/run', {});
    expect(run.status).toBe(200);
    expect(run.body.data).toMatchObject({ module_id: 'onboarding', status: 'installed' });
    expect((await call('POST', '/update/dry-run')).status).toBe(200);
    const upd = await call('POST', '/update');
    expect(upd.status).toBe(200);
    expect(upd.body.data).toMatchObject({ module_id: 'onboarding', status: 'installed' });
    const many = await t.request('POST', '/api/v1/modules/install/dry-run', { session: token, body: { modules: ['privacy', 'ext-business'] } });
    expect(many.body).toMatchObject({ success: true, data: { dry_run: true } });
    expect((await call('POST', '/uninstall', {})).body.data.status).toBe('not_installed');
  });

  it('§2.12 when an admin (not superadmin) or a customer calls the hub, then the admin may read only and the customer gets 403', async () => {
    const { token: admin } = await makeSession(t, { user_type: 'admin' });
    const { token: customer } = await makeSession(t);
    expect((await t.request('GET', '/api/v1/modules/install/status', { session: admin })).status).toBe(200);
    expectError(await t.request('POST', '/api/v1/modules/install/onboarding/dry-run', { session: admin, body: {} }), 403);
    expectError(await t.request('GET', '/api/v1/modules/install/status', { session: customer }), 403);
    expectError(await t.request('GET', '/api/v1/modules/install/status'), 401);
  });

  it('§2.14 when onboarding is walked (state, start, step complete and skip, complete), then the state has id, user_id, status, step, completed, data', async () => {
    const { user, token } = await makeSession(mods);
    const call = (method: string, path: string, body?: unknown) => mods.request(method, `/api/v1/onboarding${path}`, { session: token, body });
    const shape = { id: expect.anything(), user_id: user.id, status: expect.any(String), completed: expect.any(Boolean), data: expect.any(Object) };
    const initial = await call('GET', '');
    expect(initial.status).toBe(200);
    expect(initial.body).toMatchObject({ success: true, user_context: { authenticated: true }, meta: {} });
    expect(initial.body.data).toHaveProperty('step');
    const started = await call('POST', '/start');
    expect(started.body.data).toMatchObject({ ...shape, id: expect.any(String), status: 'in_progress' });
    const step = started.body.data.step as string;
    expect((await call('POST', `/steps/${step}/complete`, { data: { nickname: 'N' } })).body.data).toMatchObject(shape);
    const next = (await call('GET', '/')).body.data.step as string;
    expect((await call('POST', `/steps/${next}/skip`)).body.data).toMatchObject(shape);
    const done = await call('POST', '/complete', {});
    expect(done.body.data).toMatchObject({ ...shape, status: 'completed', completed: true });
  });

  it('spec when POST /auth/user/me/onboarding/complete gets acquisition and business fields, then 200 data.user and nothing write-only is read back', async () => {
    const { token } = await makeSession(mods);
    const r = await mods.request('POST', '/auth/user/me/onboarding/complete', {
      session: token,
      body: { acquisition_source: 'contract-src', team_size_range: '11-50', is_business: true, biz_name: 'Acme' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, data: { user: { first_time: false, is_business: true, biz_name: 'Acme' } } });
    const me = await mods.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(me.text).not.toContain('contract-src');
    expect(me.text).not.toMatch(/acquisition_|team_size_range/);
  });

  it('spec when ext-business and privacy are installed, then GET /auth/user/me and admin detail carry business and privacy fields', async () => {
    const { user, token } = await makeSession(mods);
    const { token: admin } = await makeSession(mods, { user_type: 'admin' });
    const fields = [
      'is_business',
      'biz_name',
      'biz_country',
      'biz_state',
      'biz_position',
      'biz_postal_code',
      'gdpr_consent',
      'gdpr_consent_at',
      'gdpr_consent_version',
      'ccpa_applies',
      'ccpa_opt_out',
      'ccpa_opt_out_at',
      'privacy_region',
    ];
    const me = await mods.request('GET', '/auth/user/me', { session: token, bridge: true });
    const detail = await mods.request('GET', `/auth/admin/users/${user.id}`, { session: admin });
    for (const u of [me.body.user, me.body.data, detail.body.data.user]) {
      for (const f of fields) expect(u, f).toHaveProperty(f);
    }
    const plain = await t.request('GET', '/auth/user/me', { session: (await makeSession(t)).token, bridge: true });
    for (const f of fields) expect(plain.body.user, f).not.toHaveProperty(f);
  });

  it('spec when /auth/user/me/privacy is written and read, then {success, data} with the privacy fields, and PUT /auth/user/me shows them', async () => {
    const { token } = await makeSession(mods);
    const put = await mods.request('PUT', '/auth/user/me/privacy', {
      session: token,
      body: { gdpr_consent: true, gdpr_consent_version: 'v1', privacy_region: 'EU' },
    });
    expect(put.status).toBe(200);
    expectJson(put);
    expect(put.body).toMatchObject({ success: true, data: { gdpr_consent: true, gdpr_consent_version: 'v1', privacy_region: 'EU' } });
    expect(put.body.data.gdpr_consent_at).toMatch(ISO);
    const get = await mods.request('GET', '/auth/user/me/privacy', { session: token });
    expect(get.body).toMatchObject({ success: true, data: { gdpr_consent: true, privacy_region: 'EU' } });
    const me = await mods.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(me.body.user).toMatchObject({ gdpr_consent: true, privacy_region: 'EU' });
  });

  it('spec when a module is switched off, then its routes answer 503 MODULE_DISABLED as JSON', async () => {
    const { token } = await makeSession(mods);
    await mods.app.modules.hub.disable('onboarding');
    try {
      const r = await mods.request('GET', '/api/v1/onboarding', { session: token });
      expectError(r, 503);
      expect(r.body.code).toBe('MODULE_DISABLED');
    } finally {
      await mods.app.modules.hub.enable('onboarding');
    }
    expect((await mods.request('GET', '/api/v1/onboarding', { session: token })).status).toBe(200);
  });
});

describe(`wire contract: §4 conflict list (${BACKEND})`, () => {
  it('§4.1 when any answer returns a session (login, register, user/me, session/current, refresh, token validate), then sessionId/session_id and expiresAt/expires_at agree', async () => {
    const user = await makeUser(t);
    const l = await login(t, { email: user.email, password: DEFAULT_PASSWORD });
    const token = l.body.sessionId as string;
    const reg = await t.request('POST', '/auth/register/public', { body: { email: uniqueEmail('s41'), password: DEFAULT_PASSWORD } });
    const tl = await t.request('POST', '/auth/token/validate', { body: { token: await loginTokenFor(user.email) } });
    const answers: [string, Record<string, unknown>, string | undefined][] = [
      ['login', l.body, token],
      ['register', reg.body.data, undefined],
      ['user/me', (await t.request('GET', '/auth/user/me', { session: token, bridge: true })).body, token],
      ['session/current', (await t.request('GET', '/auth/session/current', { session: token })).body, token],
      ['refresh', (await t.request('POST', '/auth/refresh', { session: token })).body, token],
      ['token validate', tl.body, undefined],
    ];
    for (const [, body, tok] of answers) expectBothSpellings(body, tok);
  });

  it('§4.10 when errors are sent, then error is always a string, never a nested object', async () => {
    const { token } = await makeSession(t);
    const answers = await Promise.all([
      t.request('PUT', '/auth/user/me', { session: token, body: { dob: 'yesterday', tmz: 'Mars/Base' } }),
      t.request('POST', '/auth/login', { body: {} }),
      t.request('POST', '/auth/bridge/validate', { bridge: true, body: { validation_mode: 'paranoid' } }),
      t.request('GET', '/auth/admin/users?page=zero', { session: (await makeSession(t, { user_type: 'admin' })).token }),
    ]);
    for (const r of answers) {
      expectError(r, 400, r.text);
      expect(r.text).not.toMatch(/"error":\{/);
    }
  });
});
