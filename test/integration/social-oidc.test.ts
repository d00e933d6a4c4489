import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createBrowser } from '../helpers/browser.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
import { startOidcServer, type OidcAccount, type OidcServer } from '../helpers/oidc-server.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { sha256Hex } from '../../src/social/id-token.js';
import { FRONTEND, PUBLIC, PUBLIC_HOST, accountsOf, countRows, socialEnv, usersWithEmail } from './social-helpers.js';

type Oidc = 'google' | 'microsoft' | 'apple';
const WEB: Record<Oidc, string> = { google: 'google-web.apps.googleusercontent.com', microsoft: 'ms-web-client', apple: 'com.example.web' };
const MOBILE: Record<Oidc, string> = { google: 'google-ios.apps.googleusercontent.com', microsoft: 'ms-web-client', apple: 'com.example.ios' };

let oidc: OidcServer;
let t: TestApp;
let keyDir: string;

beforeAll(async () => {
  const cb = (p: Oidc) => [`${PUBLIC}/auth/social/${p}/callback`];
  oidc = await startOidcServer(
    [
      { client_id: WEB.google, client_secret: 'google-secret', redirect_uris: cb('google') },
      { client_id: MOBILE.google, client_secret: 'google-ios-secret', redirect_uris: [] },
      { client_id: WEB.microsoft, client_secret: 'ms-secret', redirect_uris: cb('microsoft') },
      { client_id: WEB.apple, client_secret: 'apple-registered-secret', redirect_uris: cb('apple'), token_endpoint_auth_method: 'client_secret_post' },
      { client_id: MOBILE.apple, client_secret: 'apple-ios-secret', redirect_uris: [], token_endpoint_auth_method: 'client_secret_post' },
    ],
    WEB.apple,
  );
  keyDir = mkdtempSync(path.join(os.tmpdir(), 'gh-apple-'));
  const keyFile = path.join(keyDir, 'AuthKey.p8');
  writeFileSync(keyFile, oidc.apple.privateKeyPem, { mode: 0o600 });
  t = await startTestApp({
    env: socialEnv({
      google: { client_id: WEB.google, client_ids: [MOBILE.google], client_secret: 'google-secret', endpoints: oidc.endpoints },
      microsoft: { client_id: WEB.microsoft, client_secret: 'ms-secret', endpoints: { ...oidc.endpoints, issuer: `${oidc.origin}/{tenantid}` } },
      apple: {
        client_id: WEB.apple,
        client_ids: [MOBILE.apple],
        team_id: oidc.apple.teamId,
        key_id: oidc.apple.keyId,
        // The stand-in is a strict OpenID provider: it wants `openid` beside Apple's own scopes.
        scopes: ['openid', 'name', 'email'],
        private_key_file: keyFile,
        endpoints: { ...oidc.endpoints, token: oidc.appleToken },
      },
    }),
  });
});
afterAll(async () => {
  await t?.close();
  await oidc?.close();
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
});

let seq = 0;
const account = (over: Partial<OidcAccount> = {}): OidcAccount => {
  const a = {
    sub: `sub-${Date.now().toString(36)}-${++seq}`,
    email: uniqueEmail('oidc'),
    email_verified: true,
    given_name: 'Grace',
    family_name: 'Hopper',
    ...over,
  };
  oidc.setAccount(a);
  return a;
};

async function webSignIn(provider: Oidc, a: OidcAccount, query = '') {
  const browser = createBrowser([FRONTEND], { [PUBLIC]: t.url }, { login: a.sub, password: 'any' });
  const landing = await browser.go(`${PUBLIC}/auth/social/${provider}/login${query}`);
  return { landing, cookie: browser.cookies(PUBLIC_HOST).get('session_id') };
}

const me = async (token: string) => (await t.request('GET', '/auth/me', { session: token })).body?.data?.user;

describe.each(['google', 'microsoft', 'apple'] as const)('%s (real local OpenID provider)', (provider) => {
  it('when a new user signs in through the web flow, then the id_token is verified and a verified customer is created and linked', async () => {
    const a = account();
    const { landing, cookie } = await webSignIn(provider, a);
    expect(landing.url.origin + landing.url.pathname).toBe(`${FRONTEND}/login`);
    expect(Object.fromEntries(landing.url.searchParams)).toMatchObject({ social_login: 'success', provider });
    const user = await me(cookie!);
    expect(user.email).toBe(a.email);
    expect(user.is_verified).toBe(true);
    expect(user.user_type).toBe('customer');
    if (provider !== 'apple') expect([user.name, user.last_name]).toEqual(['Grace', 'Hopper']);
    const [acc] = await accountsOf(t, { provider, provider_user_id: a.sub });
    expect(acc!.user_id).toBe(user.id);
  });

  it('when the same person signs in again (web, then mobile with an id_token for a mobile client id), then the same user is signed in', async () => {
    const a = account();
    const first = await me((await webSignIn(provider, a)).cookie!);
    const again = await me((await webSignIn(provider, a)).cookie!);
    expect(again.id).toBe(first.id);
    const idToken = await oidc.idTokenFor(MOBILE[provider], a.sub);
    const r = await t.request('POST', `/auth/social/${provider}/login-api`, { body: { idToken } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, loginType: 'social_auth_api', provider, is_new_user: false });
    expect(r.body.user.id).toBe(first.id);
    expect(await usersWithEmail(t, a.email!)).toBe(1);
  });

  it('when a mobile app signs a new user up with an id_token (and its nonce), then the contract shape is answered', async () => {
    const a = account();
    const nonce = randomBytes(16).toString('hex');
    // Apple's native SDKs send SHA-256(nonce) to Apple and the raw nonce to the server.
    const idToken = await oidc.idTokenFor(MOBILE[provider], a.sub, provider === 'apple' ? sha256Hex(nonce) : nonce);
    const r = await t.request('POST', `/auth/social/${provider}/login-api`, { body: { idToken, nonce } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, loginType: 'social_auth_api', provider, is_new_user: true });
    expect(r.body.sessionId).toBe(r.body.session_id);
    expect(r.body.user.email).toBe(a.email);
    const wrong = await t.request('POST', `/auth/social/${provider}/login-api`, { body: { idToken, nonce: 'not-the-nonce' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('SOCIAL_INVALID_TOKEN');
  });

  it('when the provider did not verify the email and it matches an existing user, then 400 SOCIAL_ACCOUNT_LINK_REQUIRED and nothing is written', async () => {
    const existing = await makeUser(t, { is_verified: true });
    const a = account({ email: existing.email, email_verified: false });
    const before = { users: await countRows(t, 'users'), accounts: await countRows(t, 'user_accounts') };
    const { landing, cookie } = await webSignIn(provider, a);
    expect(landing.url.searchParams.get('error')).toBe('SOCIAL_ACCOUNT_LINK_REQUIRED');
    expect(cookie).toBeUndefined();
    const r = await t.request('POST', `/auth/social/${provider}/login-api`, { body: { idToken: await oidc.idTokenFor(MOBILE[provider], a.sub) } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('SOCIAL_ACCOUNT_LINK_REQUIRED');
    expect({ users: await countRows(t, 'users'), accounts: await countRows(t, 'user_accounts') }).toEqual(before);
  });

  it('when a user with two-factor on signs in, then the redirect carries requires_2fa and a pending session only', async () => {
    const user = await makeUser(t, { is_verified: true, two_factor: true });
    // A two-factor provider (the module's part, played by a hook here) offers a method.
    onTestFinished(t.app.hooks.on('auth.two_factor.methods', (p) => void p.methods.push({ id: 'm1', method: 'email', status: 'active' })));
    const a = account({ email: user.email });
    const { landing, cookie } = await webSignIn(provider, a);
    expect(landing.url.searchParams.get('requires_2fa')).toBe('true');
    expect(cookie).toBeUndefined();
    const v = await t.app.services.sessions.validate(landing.url.searchParams.get('session_id')!, { allowPending: true });
    expect(v.session.status).toBe('pending_2fa');
    expect(v.user.id).toBe(user.id);
  });
});

describe('Apple specifics', () => {
  it('when Apple is asked, then the callback is a form POST, the nonce sent is hashed, and the client secret is an ES256 JWT Apple accepts', async () => {
    const start = await fetch(`${t.url}/auth/social/apple/login`, { redirect: 'manual' });
    const url = new URL(start.headers.get('location')!);
    expect(url.searchParams.get('response_mode')).toBe('form_post');
    expect(url.searchParams.get('nonce')).toMatch(/^[0-9a-f]{64}$/);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    const refusals = oidc.appleRefusals;
    const a = account();
    const { cookie } = await webSignIn('apple', a);
    expect(cookie).toBeTruthy();
    expect(oidc.appleRefusals).toBe(refusals);
  });

  it('when Apple posts the name (form field `user`, first sign-in only), then the new user gets it', async () => {
    const a = account({ given_name: undefined, family_name: undefined });
    const start = await fetch(`${t.url}/auth/social/apple/login`, { redirect: 'manual' });
    const flowCookie = start.headers
      .getSetCookie()
      .find((c) => c.startsWith('gh_social_flow='))!
      .split(';')[0]!;
    // The browser stops where Apple's page would post the callback; the test posts it with the name added.
    const atCallback = await createBrowser([PUBLIC], {}, { login: a.sub, password: 'x' }).go(start.headers.get('location')!);
    expect(atCallback.url.pathname).toBe('/auth/social/apple/callback');
    const user = JSON.stringify({ name: { firstName: 'Tim', lastName: 'Apple' }, email: a.email });
    const r = await t.request('POST', '/auth/social/apple/callback?format=json', {
      raw: new URLSearchParams({ ...atCallback.form!, user }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', cookie: flowCookie },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, loginType: 'social_auth', provider: 'apple' });
    expect([r.body.user.name, r.body.user.last_name]).toEqual(['Tim', 'Apple']);
  });

  it('when Apple says email_verified "false" (a string), then the email is not trusted', async () => {
    const a = account({ email_verified: false });
    const { cookie } = await webSignIn('apple', a);
    expect((await me(cookie!)).is_verified).toBe(false);
  });
});

describe('Microsoft tenant issuer rule', () => {
  it('when the token names another tenant than its issuer, then it is refused', async () => {
    const a = account();
    const token = await oidc.sign({
      iss: `${oidc.origin}/other-tenant`,
      tid: '11111111-2222-3333-4444-555555555555',
      aud: WEB.microsoft,
      sub: a.sub,
      email: a.email,
      email_verified: true,
    });
    const r = await t.request('POST', '/auth/social/microsoft/login-api', { body: { idToken: token } });
    expect(r.status).toBe(401);
    const ok = await oidc.sign({ iss: oidc.issuer, aud: WEB.microsoft, sub: a.sub, email: a.email, email_verified: true });
    expect((await t.request('POST', '/auth/social/microsoft/login-api', { body: { idToken: ok } })).status).toBe(200);
  });
});
