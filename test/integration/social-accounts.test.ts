import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowser } from '../helpers/browser.js';
import { makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { APPS, startOAuthServers, type FakeUser, type OAuthServers } from '../helpers/social-oauth-servers.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { FRONTEND, PUBLIC, PUBLIC_HOST, accountsOf, socialEnv } from './social-helpers.js';

let servers: OAuthServers;
let t: TestApp;

beforeAll(async () => {
  servers = await startOAuthServers();
  const cfg = (p: 'github' | 'discord' | 'facebook') => ({ client_id: APPS[p].clientId, client_secret: APPS[p].secret, endpoints: servers.endpoints(p) });
  t = await startTestApp({ env: socialEnv({ github: cfg('github'), discord: cfg('discord'), facebook: cfg('facebook') }) });
});
afterAll(async () => {
  await t?.close();
  await servers?.close();
});

let seq = 0;
const fake = (over: Partial<FakeUser> = {}): FakeUser => ({
  id: `${Date.now()}${++seq}`,
  email: uniqueEmail('link'),
  verified: true,
  name: 'Lin Ker',
  ...over,
});

/** Runs the web flow in a browser that holds `session` as its session cookie (an explicit link when `link`). */
async function flow(provider: 'github' | 'discord' | 'facebook', user: FakeUser, opts: { session?: string; query?: string } = {}) {
  servers.nextUser(provider, user);
  const browser = createBrowser([FRONTEND], { [PUBLIC]: t.url });
  if (opts.session) browser.setCookie(PUBLIC_HOST, 'session_id', opts.session);
  return browser.go(`${PUBLIC}/auth/social/${provider}/login${opts.query ?? ''}`);
}

const list = (session: string) => t.request('GET', '/auth/social/accounts', { session });

describe('providers', () => {
  it('when listed, then only the configured providers appear, in the contract order', async () => {
    const r = await t.request('GET', '/auth/social/providers');
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.providers.map((p: { id: string }) => p.id)).toEqual(['github', 'facebook', 'discord']);
    expect(r.body.providers[0]).toMatchObject({ id: 'github', name: 'GitHub', login_url: '/auth/social/github/login' });
  });

  it('when social login is off, then every social route answers 503 SOCIAL_LOGIN_DISABLED', async () => {
    const off = await startTestApp({ env: socialEnv({ github: { client_id: 'a', client_secret: 'b' } }, { SOCIAL_LOGIN: 'false' }) });
    try {
      const { token } = await makeSession(off);
      for (const [m, p] of [
        ['GET', '/auth/social/providers'],
        ['GET', '/auth/social/github/login'],
        ['GET', '/auth/social/github/callback?code=a&state=b'],
        ['POST', '/auth/social/github/login-api'],
        ['GET', '/auth/social/accounts'],
        ['DELETE', '/auth/social/accounts/github'],
      ] as const) {
        const r = await off.request(m, p, { session: token, body: m === 'POST' ? { accessToken: 'x' } : undefined });
        expect({ p, status: r.status, code: r.body.code }).toEqual({ p, status: 503, code: 'SOCIAL_LOGIN_DISABLED' });
      }
    } finally {
      await off.close();
    }
  });
});

describe('linking', () => {
  it('when a signed-in user links a provider explicitly, then it is listed, and signing in with it reaches that user', async () => {
    const { user, token } = await makeSession(t, { is_verified: false });
    // Another email at the provider, unverified locally: only the explicit link may join them.
    const gh = fake({ email: uniqueEmail('elsewhere') });
    const landing = await flow('github', gh, { session: token, query: '?link=true' });
    expect(Object.fromEntries(landing.url.searchParams)).toMatchObject({ social_login: 'success', linked: 'true', provider: 'github' });
    const r = await list(token);
    expect(r.status).toBe(200);
    expect(r.body.accounts).toHaveLength(1);
    expect(r.body.accounts[0]).toMatchObject({ provider: 'github', provider_user_id: gh.id, provider_email: gh.email });
    expect(r.body.accounts[0]).not.toHaveProperty('access_token');
    const api = await t.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', gh) } });
    expect(api.body.user.id).toBe(user.id);
  });

  it('when the user is disabled while at the provider, then the link is refused and nothing is written', async () => {
    const { user, token } = await makeSession(t);
    const start = await t.request('GET', '/auth/social/github/login?link=true', { session: token });
    const flowCookie = start.headers
      .getSetCookie()
      .find((c) => c.startsWith('gh_social_flow='))!
      .split(';')[0]!;
    servers.nextUser('github', fake());
    const consent = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    await t.app.services.users.adminUpdate(null, user.id, { disabled: true });
    const cb = new URL(consent.headers.get('location')!);
    const r = await t.request('GET', `${cb.pathname}${cb.search}&format=json`, { headers: { cookie: flowCookie } });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('SOCIAL_ACCOUNT_DISABLED');
    expect(await accountsOf(t, { user_id: user.id })).toHaveLength(0);
  });

  it('when linking is asked without a session, then 401 and no flow starts', async () => {
    const r = await t.request('GET', '/auth/social/github/login?link=true');
    expect(r.status).toBe(401);
    expect(r.headers.get('location')).toBeNull();
  });

  it('when the provider account is linked to someone else, or the user already has another account of that provider, then 400 SOCIAL_ACCOUNT_ALREADY_LINKED', async () => {
    const taken = fake();
    await flow('discord', taken);
    const { token } = await makeSession(t);
    const landing = await flow('discord', taken, { session: token, query: '?link=true&format=json' });
    expect(landing.status).toBe(400);
    expect(landing.json.code).toBe('SOCIAL_ACCOUNT_ALREADY_LINKED');
    await flow('discord', fake(), { session: token, query: '?link=true' });
    const second = await flow('discord', fake(), { session: token, query: '?link=true' });
    expect(second.url.searchParams.get('error')).toBe('SOCIAL_ACCOUNT_ALREADY_LINKED');
    expect((await list(token)).body.accounts).toHaveLength(1);
  });
});

describe('unlinking', () => {
  it('when the user has a password, then the only linked provider can be unlinked', async () => {
    const { token } = await makeSession(t);
    await flow('github', fake(), { session: token, query: '?link=true' });
    const r = await t.request('DELETE', '/auth/social/accounts/github', { session: token });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect((await list(token)).body.accounts).toHaveLength(0);
    const again = await t.request('DELETE', '/auth/social/accounts/github', { session: token });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('SOCIAL_ACCOUNT_NOT_LINKED');
  });

  it('when it is the last way to sign in (no password, no other provider), then unlinking is refused; with a second provider it is allowed', async () => {
    const gh = fake();
    const api = await t.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', gh) } });
    const token = api.body.session_id as string;
    const refused = await t.request('DELETE', '/auth/social/accounts/github', { session: token });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('SOCIAL_LAST_SIGN_IN_METHOD');
    expect((await list(token)).body.accounts).toHaveLength(1);

    await flow('discord', fake(), { session: token, query: '?link=true' });
    const [a, b] = await Promise.all([
      t.request('DELETE', '/auth/social/accounts/github', { session: token }),
      t.request('DELETE', '/auth/social/accounts/discord', { session: token }),
    ]);
    // Two unlinks at once cannot both pass: one way in always remains.
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    expect((await list(token)).body.accounts).toHaveLength(1);
  });

  it('when unlinking names an unknown provider or no session is sent, then 404 / 401', async () => {
    const { token } = await makeSession(t);
    expect((await t.request('DELETE', '/auth/social/accounts/twitter', { session: token })).status).toBe(404);
    expect((await t.request('DELETE', '/auth/social/accounts/github')).status).toBe(401);
    expect((await t.request('GET', '/auth/social/accounts')).status).toBe(401);
  });
});

describe('account state', () => {
  it('when the linked user is disabled, then social sign-in is refused with 403 and no session is made', async () => {
    const gh = fake();
    const api = await t.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', gh) } });
    await t.app.services.users.adminUpdate(null, api.body.user.id, { disabled: true });
    const r = await t.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', gh) } });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('SOCIAL_ACCOUNT_DISABLED');
  });

  it('when email verification is required, then an unverified provider address cannot sign up, and a linked but unverified account is refused like password login', async () => {
    const strict = await startTestApp({
      env: socialEnv(
        { github: { client_id: APPS.github.clientId, client_secret: APPS.github.secret, endpoints: servers.endpoints('github') } },
        { REQUIRE_EMAIL_VERIFICATION: 'true' },
      ),
    });
    try {
      const unverified = await strict.request('POST', '/auth/social/github/login-api', {
        body: { accessToken: servers.mint('github', fake({ verified: false })) },
      });
      expect(unverified.status).toBe(403);
      expect(unverified.body.code).toBe('SOCIAL_EMAIL_NOT_VERIFIED');
      const { user, token } = await makeSession(strict, { is_verified: false });
      const gh = fake();
      servers.nextUser('github', gh);
      const browser = createBrowser([FRONTEND], { [PUBLIC]: strict.url });
      browser.setCookie(PUBLIC_HOST, 'session_id', token);
      await browser.go(`${PUBLIC}/auth/social/github/login?link=true`);
      expect(await accountsOf(strict, { user_id: user.id })).toHaveLength(1);
      const r = await strict.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', gh) } });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('EMAIL_NOT_VERIFIED');
      const verified = await strict.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', fake()) } });
      expect(verified.status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('when registration is disabled, then a new provider user is refused but a linked one still signs in', async () => {
    const closed = await startTestApp({
      env: socialEnv(
        { github: { client_id: APPS.github.clientId, client_secret: APPS.github.secret, endpoints: servers.endpoints('github') } },
        { REGISTRATION_ENABLED: 'false' },
      ),
    });
    try {
      const r = await closed.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', fake()) } });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('REGISTRATION_DISABLED');
      const existing = await makeUser(closed, { is_verified: true });
      const ok = await closed.request('POST', '/auth/social/github/login-api', {
        body: { accessToken: servers.mint('github', fake({ email: existing.email })) },
      });
      expect(ok.status).toBe(200);
      expect(ok.body.user.id).toBe(existing.id);
      expect(await accountsOf(closed, { user_id: existing.id })).toHaveLength(1);
    } finally {
      await closed.close();
    }
  });
});

describe('limits', () => {
  it('when the Social Login and Social API budgets are spent, then 429 with the rate-limit headers', async () => {
    const limited = await startTestApp({
      env: socialEnv(
        { github: { client_id: APPS.github.clientId, client_secret: APPS.github.secret, endpoints: servers.endpoints('github') } },
        { RATE_LIMIT_SOCIAL_LOGIN: '2/15m', RATE_LIMIT_SOCIAL_API: '1/10m' },
      ),
    });
    try {
      const login = [];
      for (let i = 0; i < 3; i++) login.push(await limited.request('GET', '/auth/social/github/login'));
      expect(login.map((r) => r.status)).toEqual([302, 302, 429]);
      expect(login[0]!.headers.get('x-ratelimit-limit')).toBe('2');
      // The callback shares the Social Login budget.
      expect((await limited.request('GET', '/auth/social/github/callback?code=a&state=b')).status).toBe(429);
      const api = [];
      for (let i = 0; i < 2; i++)
        api.push(await limited.request('POST', '/auth/social/github/login-api', { body: { accessToken: servers.mint('github', fake()) } }));
      expect(api.map((r) => r.status)).toEqual([200, 429]);
    } finally {
      await limited.close();
    }
  });
});
