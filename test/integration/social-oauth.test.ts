import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { AppError, unavailable } from '../../src/errors/app-error.js';
import { createBrowser } from '../helpers/browser.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
import { APPS, startOAuthServers, type FakeUser, type OAuthProvider, type OAuthServers } from '../helpers/social-oauth-servers.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { FRONTEND, PUBLIC, PUBLIC_HOST, accountsOf, countRows, socialEnv, usersWithEmail } from './social-helpers.js';

let servers: OAuthServers;
let t: TestApp;
const host = PUBLIC_HOST;

beforeAll(async () => {
  servers = await startOAuthServers();
  const cfg = (p: OAuthProvider, extra: Record<string, unknown> = {}) => ({
    client_id: APPS[p].clientId,
    client_secret: APPS[p].secret,
    endpoints: servers.endpoints(p),
    ...extra,
  });
  t = await startTestApp({ env: socialEnv({ github: cfg('github'), discord: cfg('discord', { store_tokens: true }), facebook: cfg('facebook') }) });
});
afterAll(async () => {
  await t?.close();
  await servers?.close();
});

let seq = 7000;
const fakeUser = (over: Partial<FakeUser> = {}): FakeUser => ({
  id: String(++seq) + String(Date.now() % 100000),
  email: uniqueEmail('social'),
  verified: true,
  name: 'Ada Lovelace',
  ...over,
});

async function webSignIn(provider: OAuthProvider, user: FakeUser, query = '') {
  servers.nextUser(provider, user);
  const browser = createBrowser([FRONTEND, 'https://app.example.test'], { [PUBLIC]: t.url });
  const landing = await browser.go(`${PUBLIC}/auth/social/${provider}/login${query}`);
  return { landing, browser, cookie: browser.cookies(host).get('session_id') };
}

/** GET /auth/me, answering the user as `body.user` (it answers {data: {user}}; a pending session gets success false). */
const me = async (token: string) => {
  const r = await t.request('GET', '/auth/me', { session: token });
  return { ...r, body: { ...r.body, user: r.body?.data?.user } };
};

describe.each(['github', 'discord', 'facebook'] as const)('%s (real local OAuth server)', (provider) => {
  it('when a new user signs in through the web flow, then a customer is created, linked, and the redirect brings an HttpOnly session cookie', async () => {
    const u = fakeUser();
    const { landing, cookie } = await webSignIn(provider, u);
    expect(landing.url.origin + landing.url.pathname).toBe(`${FRONTEND}/login`);
    expect(landing.url.searchParams.get('social_login')).toBe('success');
    expect(landing.url.searchParams.get('provider')).toBe(provider);
    expect(landing.url.searchParams.get('session_id')).toBeNull();
    expect(cookie).toBeTruthy();
    const r = await me(cookie!);
    expect(r.status).toBe(200);
    expect(r.body.user.email).toBe(u.email);
    expect(r.body.user.user_type).toBe('customer');
    expect(r.body.user.name).toBe('Ada');
    expect(r.body.user.last_name).toBe('Lovelace');
    // Facebook never says an address is verified.
    expect(r.body.user.is_verified).toBe(provider !== 'facebook');
    expect(r.body.user.picture).toMatch(/^https:\/\//);
    const [acc] = await accountsOf(t, { provider, provider_user_id: u.id });
    expect(acc!.user_id).toBe(r.body.user.id);
    expect(acc!.provider_email).toBe(u.email);
    // The code went with its PKCE verifier, the client authenticated as the provider expects.
    const req = servers.tokenRequests.filter((x) => x.provider === provider).at(-1)!;
    expect(req.form.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(req.basic).toBe(provider !== 'facebook');
  });

  it('when a known user signs in again (web, then mobile), then the same account is used and nothing new is created', async () => {
    const u = fakeUser();
    const first = await webSignIn(provider, u);
    const id = (await me(first.cookie!)).body.user.id;
    const again = await webSignIn(provider, { ...u, name: 'Ada King' });
    expect((await me(again.cookie!)).body.user.id).toBe(id);
    const r = await t.request('POST', `/auth/social/${provider}/login-api`, { body: { accessToken: servers.mint(provider, { ...u, name: 'Ada King' }) } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, loginType: 'social_auth_api', provider, is_new_user: false });
    expect(r.body.user.id).toBe(id);
    expect(await usersWithEmail(t, u.email!)).toBe(1);
    const accounts = await accountsOf(t, { provider, provider_user_id: u.id });
    expect(accounts).toHaveLength(1);
    expect(accounts[0]!.provider_name).toBe('Ada King');
  });

  it('when a mobile app sends an access token issued to our app, then a new user is signed up and the contract shape is answered', async () => {
    const u = fakeUser();
    // The contract's field is `idToken` ("access token or ID token").
    const r = await t.request('POST', `/auth/social/${provider}/login-api`, { body: { idToken: servers.mint(provider, u) } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, loginType: 'social_auth_api', provider, is_new_user: true });
    expect(r.body.sessionId).toBe(r.body.session_id);
    expect(r.body.expiresAt).toBe(r.body.expires_at);
    expect(r.body.user.email).toBe(u.email);
    expect((await me(r.body.sessionId)).status).toBe(200);
  });

  it("when a mobile app sends another app's access token, then it is refused with 401 and nothing is created", async () => {
    const u = fakeUser();
    const before = await countRows(t, 'users');
    const r = await t.request('POST', `/auth/social/${provider}/login-api`, {
      body: { accessToken: servers.mint(provider, u, provider === 'github' ? 'Iv1.otherapp' : '9999999999') },
    });
    expect(r.status).toBe(401);
    expect(r.body.success).toBe(false);
    expect(['SOCIAL_TOKEN_NOT_FOR_APP', 'SOCIAL_INVALID_TOKEN']).toContain(r.body.code);
    expect(await countRows(t, 'users')).toBe(before);
    expect(await usersWithEmail(t, u.email!)).toBe(0);
  });

  it('when the token is unknown to the provider, then 401 and nothing is created', async () => {
    const before = await countRows(t, 'users');
    const r = await t.request('POST', `/auth/social/${provider}/login-api`, { body: { accessToken: `forged-${randomBytes(8).toString('hex')}` } });
    expect(r.status).toBe(401);
    expect(await countRows(t, 'users')).toBe(before);
  });

  it('when the provider is down or does not answer, then 503 with a clear code and nothing is created', async () => {
    const u = fakeUser();
    const before = await countRows(t, 'users');
    try {
      servers.mode(provider, 'down');
      const down = await t.request('POST', `/auth/social/${provider}/login-api`, { body: { accessToken: 'x'.repeat(20) } });
      expect(down.status).toBe(503);
      expect(down.body.code).toBe('SOCIAL_PROVIDER_UNAVAILABLE');
      servers.mode(provider, 'hang');
      const started = Date.now();
      const hung = await t.request('POST', `/auth/social/${provider}/login-api`, { body: { accessToken: 'x'.repeat(20) } });
      expect(hung.status).toBe(503);
      expect(hung.body.code).toBe('SOCIAL_PROVIDER_UNAVAILABLE');
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      servers.mode(provider, 'ok');
    }
    // The web flow: the provider fails after consent (token endpoint down): an error redirect, nothing created.
    servers.nextUser(provider, u);
    const browser = createBrowser([FRONTEND], { [PUBLIC]: t.url });
    const start = await fetch(`${t.url}/auth/social/${provider}/login`, { redirect: 'manual' });
    const flowCookie = start.headers
      .getSetCookie()
      .find((c) => c.startsWith('gh_social_flow='))!
      .split(';')[0]!;
    const consent = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    servers.mode(provider, 'down');
    try {
      const landing = await browser.go(consent.headers.get('location')!, { headers: { cookie: flowCookie } });
      expect(landing.url.searchParams.get('social_login')).toBe('error');
      expect(landing.url.searchParams.get('error')).toBe('SOCIAL_PROVIDER_UNAVAILABLE');
    } finally {
      servers.mode(provider, 'ok');
    }
    expect(await countRows(t, 'users')).toBe(before);
  });
});

describe('email rules across providers', () => {
  it('when a provider email matches an existing user and both sides verified it, then the provider is linked to that user', async () => {
    const existing = await makeUser(t, { is_verified: true });
    const u = fakeUser({ email: existing.email, verified: true });
    const { cookie } = await webSignIn('discord', u);
    expect((await me(cookie!)).body.user.id).toBe(existing.id);
    expect((await accountsOf(t, { provider: 'discord', provider_user_id: u.id }))[0]!.user_id).toBe(existing.id);
  });

  it.each([
    ['github', true, false],
    ['discord', false, true],
    ['facebook', true, true],
  ] as const)(
    'when %s says verified=%s and the local email verified=%s do not both hold, then 400 SOCIAL_ACCOUNT_LINK_REQUIRED and nothing is written',
    async (provider, providerVerified, localVerified) => {
      const existing = await makeUser(t, { is_verified: localVerified });
      const u = fakeUser({ email: existing.email, verified: providerVerified });
      const before = { users: await countRows(t, 'users'), accounts: await countRows(t, 'user_accounts'), sessions: await countRows(t, 'sessions') };
      const web = await webSignIn(provider, u);
      expect(web.landing.url.searchParams.get('social_login')).toBe('error');
      expect(web.landing.url.searchParams.get('error')).toBe('SOCIAL_ACCOUNT_LINK_REQUIRED');
      expect(web.cookie).toBeUndefined();
      const api = await t.request('POST', `/auth/social/${provider}/login-api`, { body: { accessToken: servers.mint(provider, u) } });
      expect(api.status).toBe(400);
      expect(api.body).toMatchObject({ success: false, code: 'SOCIAL_ACCOUNT_LINK_REQUIRED' });
      expect(typeof api.body.error).toBe('string');
      expect({ users: await countRows(t, 'users'), accounts: await countRows(t, 'user_accounts'), sessions: await countRows(t, 'sessions') }).toEqual(before);
    },
  );

  it('when GitHub has no primary email, then 400 SOCIAL_EMAIL_MISSING and nothing is created', async () => {
    const before = await countRows(t, 'users');
    const r = await t.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', fakeUser({ email: null })) } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('SOCIAL_EMAIL_MISSING');
    expect(await countRows(t, 'users')).toBe(before);
  });

  it('when provider tokens are kept (store_tokens), then they are stored sealed, never in clear', async () => {
    const u = fakeUser();
    await webSignIn('discord', u);
    const [acc] = await accountsOf(t, { provider: 'discord', provider_user_id: u.id });
    expect(acc!.access_token).toMatch(/^v1\./);
    expect(acc!.refresh_token).toMatch(/^v1\./);
    const token = servers.mint('discord', u);
    await t.request('POST', '/auth/social/discord/login-api', { body: { accessToken: token } });
    const [after] = await accountsOf(t, { provider: 'discord', provider_user_id: u.id });
    expect(after!.access_token).toMatch(/^v1\./);
    expect(after!.access_token).not.toContain(token);
    // Not kept where not configured.
    const g = fakeUser();
    await webSignIn('github', g);
    expect((await accountsOf(t, { provider: 'github', provider_user_id: g.id }))[0]!.access_token).toBeNull();
  });
});

describe('two-factor', () => {
  it('when a user with two-factor on signs in socially, then only a pending session is issued (web redirect and login-api)', async () => {
    const user = await makeUser(t, { is_verified: true, two_factor: true });
    const u = fakeUser({ email: user.email, verified: true });
    // Nothing provides the second factor yet: the seam fails closed, no session at all.
    const closed = await webSignIn('github', u);
    expect(closed.landing.url.searchParams.get('social_login')).toBe('error');
    expect(closed.landing.url.searchParams.get('error')).toBe('MODULE_DISABLED');
    expect(closed.cookie).toBeUndefined();
    expect(closed.landing.url.searchParams.get('session_id')).toBeNull();
    // A two-factor provider (the module's part, played by a hook here) offers a method.
    onTestFinished(t.app.hooks.on('auth.two_factor.methods', (p) => void p.methods.push({ id: 'm1', method: 'email', status: 'active' })));
    const { landing, cookie } = await webSignIn('github', u);
    expect(landing.url.searchParams.get('requires_2fa')).toBe('true');
    const pending = landing.url.searchParams.get('session_id')!;
    expect(pending).toBeTruthy();
    expect(cookie).toBeUndefined();
    const denied = await me(pending);
    expect(denied.body).toMatchObject({ success: false, requires_2fa: true });
    const v = await t.app.services.sessions.validate(pending, { allowPending: true });
    expect(v.session.status).toBe('pending_2fa');

    const api = await t.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', u) } });
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({ success: false, requires_2fa: true, loginType: 'social_auth_api', provider: 'github' });
    expect((await t.app.services.sessions.validate(api.body.session_id, { allowPending: true })).session.status).toBe('pending_2fa');
    expect((await me(api.body.session_id)).body.success).toBe(false);
  });
});

describe('the sign-in seam', () => {
  it("when a social sign-in happens, then it runs the seam's hooks: before (may refuse), the two-factor methods and auth.login, named 'social:<provider>'", async () => {
    const user = await makeUser(t, { is_verified: true });
    const u = fakeUser({ email: user.email, verified: true });
    const seen: string[] = [];
    const offBefore = t.app.hooks.on(
      'auth.sign_in.before',
      ({ method }) => {
        seen.push(`before:${method}`);
        throw new AppError(403, 'ACCOUNT_LOCKED', 'Locked by policy');
      },
      'test',
      ({ user: x }) => x.id === user.id,
    );
    try {
      const refused = await t.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', u) } });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ success: false, code: 'ACCOUNT_LOCKED', error: 'Locked by policy' });
      expect(await t.app.services.sessions.listForUser(user.id)).toEqual([]);
    } finally {
      offBefore();
    }
    const offLogin = t.app.hooks.on(
      'auth.login',
      ({ method }) => void seen.push(`login:${method}`),
      'test',
      ({ user: x }) => x.id === user.id,
    );
    try {
      const ok = await t.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', u) } });
      expect(ok.status).toBe(200);
      expect(ok.body.success).toBe(true);
    } finally {
      offLogin();
    }
    expect(seen).toEqual(['before:social:github', 'login:social:github']);
  });

  it('when a two-factor user signs in socially, then the methods the hooks offer are answered, and a failing methods handler fails the sign-in closed', async () => {
    const user = await makeUser(t, { is_verified: true, two_factor: true });
    const u = fakeUser({ email: user.email, verified: true });
    const off = t.app.hooks.on(
      'auth.two_factor.methods',
      ({ methods, method }) => void methods.push({ type: 'test', via: method }),
      'test',
      ({ user: x }) => x.id === user.id,
    );
    try {
      const r = await t.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', u) } });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: false, requires_2fa: true, available_methods: [{ type: 'test', via: 'social:github' }] });
    } finally {
      off();
    }
    const down = t.app.hooks.on(
      'auth.two_factor.methods',
      () => {
        throw unavailable('Two-factor is unavailable');
      },
      'test',
      ({ user: x }) => x.id === user.id,
    );
    try {
      const r = await t.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', u) } });
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ success: false, code: 'SERVICE_UNAVAILABLE' });
      expect(r.body.session_id).toBeUndefined();
      // Nothing it may have opened is a full session.
      expect((await t.app.services.sessions.listForUser(user.id)).filter((s) => s.status === 'active')).toEqual([]);
    } finally {
      down();
    }
  });

  it('when a first social sign-in creates the user, then auth.registered names the provider', async () => {
    const u = fakeUser();
    const registered: unknown[] = [];
    const off = t.app.hooks.on(
      'auth.registered',
      ({ user, method }) => void registered.push({ email: user.email, method }),
      'test',
      ({ user }) => user.email === u.email,
    );
    try {
      expect((await t.request('POST', '/auth/social/discord/login-api', { body: { accessToken: servers.mint('discord', u) } })).status).toBe(200);
    } finally {
      off();
    }
    expect(registered).toEqual([{ email: u.email, method: 'social:discord' }]);
  });
});

describe('callback modes', () => {
  it('when the flow asked for format=json, then the callback answers the contract JSON with loginType social_auth', async () => {
    const u = fakeUser();
    const { landing } = await webSignIn('github', u, '?format=json');
    expect(landing.status).toBe(200);
    expect(landing.json).toMatchObject({ success: true, loginType: 'social_auth', provider: 'github' });
    expect(landing.json.sessionId).toBe(landing.json.session_id);
    expect(landing.json.expiresAt).toBeTruthy();
    expect(landing.json.user.email).toBe(u.email);
  });

  it('when return_to is allow-listed, then the callback redirects there', async () => {
    const { landing } = await webSignIn('github', fakeUser(), `?return_to=${encodeURIComponent('https://app.example.test/welcome?x=1')}`);
    expect(landing.url.origin + landing.url.pathname).toBe('https://app.example.test/welcome');
    expect(landing.url.searchParams.get('x')).toBe('1');
    expect(landing.url.searchParams.get('social_login')).toBe('success');
  });
});
