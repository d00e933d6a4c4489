import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import * as oc from 'openid-client';
import { createRemoteJWKSet, jwtVerify, decodeJwt } from 'jose';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeUser } from '../helpers/factories.js';
import { authorizationRequest, createJar, signedInJar, startFront, startProviderWithClient, type Jar } from '../helpers/oidc-rp.js';

const REDIRECT = 'http://localhost:9999/cb';

/** Follows an authorization request (PKCE S256, a state) with a jar's cookies to where it leaves the provider. */
async function authorizeWith(config: oc.Configuration, jar: Jar, extra: Record<string, string>) {
  const { url, verifier, state } = await authorizationRequest(config, REDIRECT, extra);
  const { final } = await jar.follow(url);
  return { final, verifier, state };
}

describe('Gatehouse as an OpenID provider', () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let t: TestApp;
  let issuer: string;
  let confidential: { id: string; secret: string };
  let publicClient: string;

  beforeAll(async () => {
    front = await startFront();
    t = await startTestApp({ env: { PUBLIC_URL: front.url } });
    await front.target(Number(new URL(t.url).port));
    issuer = front.url;
    const c = await t.app.services.oidc.clients.add({ name: 'Demo', redirect_uris: [REDIRECT], first_party: true });
    confidential = { id: c.client.client_id, secret: c.client_secret! };
    publicClient = (await t.app.services.oidc.clients.add({ name: 'SPA', redirect_uris: [REDIRECT], public: true, first_party: true })).client.client_id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await front?.close();
  });

  const rpConfig = (clientId: string, secret?: string) =>
    oc.discovery(new URL(issuer), clientId, undefined, secret ? oc.ClientSecretBasic(secret) : oc.None(), { execute: [oc.allowInsecureRequests] });

  /** Signs in through POST /auth/login and returns a jar holding the session cookie. */
  const signedIn = (values: Parameters<typeof makeUser>[1] = {}) => signedInJar(t, issuer, values);

  const authorize = (config: oc.Configuration, jar: Jar, extra: Record<string, string> = {}) =>
    authorizeWith(config, jar, { scope: 'openid offline_access profile email roles', prompt: 'consent', ...extra });

  it('discovery advertises the issuer, code flow only, S256 and the endpoints', async () => {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const d = (await res.json()) as Record<string, any>;
    expect(d.issuer).toBe(issuer);
    expect(d.response_types_supported).toEqual(['code']);
    expect(d.code_challenge_methods_supported).toEqual(['S256']);
    expect(d.id_token_signing_alg_values_supported).toEqual(expect.arrayContaining(['RS256', 'ES256']));
    expect(d.id_token_signing_alg_values_supported).not.toContain('none');
    for (const k of ['token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'revocation_endpoint', 'introspection_endpoint', 'end_session_endpoint'])
      expect(d[k]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oidc\//);
    const jwks = (await (await fetch(d.jwks_uri)).json()) as { keys: { alg: string }[] };
    expect(jwks.keys.map((k: { alg: string }) => k.alg).sort()).toEqual(['ES256', 'RS256']);
    expect(JSON.stringify(jwks)).not.toMatch(/"d":/);
  });

  it('code + PKCE with an existing session: id_token verified against JWKS, sub is the user id; refresh rotates; reuse revokes the grant', async () => {
    const { user, jar } = await signedIn({ name: 'Ada', last_name: 'Lovelace' });
    const config = await rpConfig(confidential.id, confidential.secret);
    const { final, verifier, state } = await authorize(config, jar);
    expect(final.startsWith(REDIRECT), final).toBe(true);
    expect(new URL(final).searchParams.get('code'), final).toBeTruthy();
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(user.id);
    // Signed in with a password through POST /auth/login: the session recorded it.
    expect(claims.amr, JSON.stringify(claims)).toEqual(['pwd']);
    expect(claims.acr).toBe('urn:gatehouse:acr:1fa');
    const jwks = createRemoteJWKSet(new URL(`${issuer}/oidc/jwks`));
    const { payload } = await jwtVerify(tokens.id_token!, jwks, { issuer, audience: confidential.id });
    expect(payload.sub).toBe(user.id);
    const info = await oc.fetchUserInfo(config, tokens.access_token, user.id);
    expect(info).toMatchObject({ sub: user.id, email: user.email, given_name: 'Ada', family_name: 'Lovelace', roles: ['customer'], user_type: 'customer' });

    expect(tokens.refresh_token).toBeTruthy();
    const r1 = await oc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(r1.refresh_token).toBeTruthy();
    expect(r1.refresh_token).not.toBe(tokens.refresh_token);
    // The rotated-out token again: refused, and the whole grant goes with it.
    await expect(oc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oc.refreshTokenGrant(config, r1.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect.poll(async () => (await t.app.services.audit.list({ types: ['oidc.refresh_reuse_detected'] } as never)).events.length).toBeGreaterThan(0);
  });

  it('no code, access token or refresh token is stored in clear: rows are keyed by their SHA-256 and hold no jti; they still work', async () => {
    const { jar } = await signedIn();
    const config = await rpConfig(confidential.id, confidential.secret);
    const { final, verifier, state } = await authorize(config, jar);
    const code = new URL(final).searchParams.get('code')!;
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    const refreshed = await oc.refreshTokenGrant(config, tokens.refresh_token!);
    const rows = await t.app.sequelize.query<{ model: string; id: string; payload: string }>('SELECT model, id, payload FROM oidc_artefacts', {
      type: QueryTypes.SELECT,
    });
    const dump = JSON.stringify(rows);
    for (const secret of [code, tokens.access_token, tokens.refresh_token!, refreshed.access_token, refreshed.refresh_token!]) {
      expect(dump).not.toContain(secret);
      if (secret !== code) expect(rows.some((r) => r.id === createHash('sha256').update(secret).digest('hex'))).toBe(true);
    }
    // Found by its hash, and given its id back: userinfo and introspection answer for the new token.
    expect((await oc.tokenIntrospection(config, refreshed.access_token)).active).toBe(true);
    expect((await oc.tokenIntrospection(config, refreshed.refresh_token!)).active).toBe(true);
  });

  it('amr is what the sign-in seam recorded, RFC 8176 values only: a synced passkey is swk, a social sign-in its upstream’s values or none', async () => {
    const config = await rpConfig(confidential.id, confidential.secret);
    const amrAfter = async (method: string, opts: { factors?: 1 | 2; amr?: string[] }) => {
      const user = await makeUser(t);
      // What the passkeys module and the social service hand the seam (their own tests pin that they do).
      const { token } = await t.app.services.signIn.signIn(user, method, {}, opts);
      const jar = createJar();
      jar.cookies.set('session_id', token);
      const { final, verifier, state } = await authorize(config, jar);
      const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
      return tokens.claims()!;
    };
    expect((await amrAfter('passkey', { factors: 2, amr: ['swk', 'user', 'mfa'] })).amr).toEqual(['swk', 'user', 'mfa']);
    expect((await amrAfter('passkey', { factors: 1, amr: ['hwk'] })).amr).toEqual(['hwk']);
    // No upstream amr: none is invented (there is no registered value for "an identity provider said so").
    const social = await amrAfter('social:github', {});
    expect(social.amr).toBeUndefined();
    expect(social.acr).toBe('urn:gatehouse:acr:1fa');
    expect((await amrAfter('social:google', { amr: ['pwd', 'mfa', 'fed'] })).amr).toEqual(['pwd', 'mfa']);
  });

  it('revoking the user’s sessions in the admin API, or disabling the user, makes the next refresh fail', async () => {
    const admin = await signedIn({ user_type: 'superadmin' });
    const adminToken = admin.jar.cookies.get('session_id')!;
    const config = await rpConfig(confidential.id, confidential.secret);
    const grantFor = async (jar: Jar) => {
      const { final, verifier, state } = await authorize(config, jar);
      return oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    };
    const one = await signedIn();
    const t1 = await grantFor(one.jar);
    const revoked = await t.request('DELETE', `/auth/admin/users/${one.user.id}/sessions`, { session: adminToken });
    expect(revoked.status).toBe(200);
    await expect(oc.refreshTokenGrant(config, t1.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });

    const two = await signedIn();
    const t2 = await grantFor(two.jar);
    // Still fine before the change.
    const fresh = await oc.refreshTokenGrant(config, t2.refresh_token!);
    const disabled = await t.request('PUT', `/auth/admin/users/${two.user.id}`, { session: adminToken, body: { disabled: true } });
    expect(disabled.status, disabled.text).toBe(200);
    await expect(oc.refreshTokenGrant(config, fresh.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a public client must use PKCE and cannot authenticate with a secret; the code is single-use', async () => {
    const { jar } = await signedIn();
    const config = await rpConfig(publicClient);
    // No code_challenge: refused at the authorization endpoint (redirected back with an error).
    const noPkce = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid' });
    const r = await jar.follow(noPkce.toString());
    expect(new URL(r.final).searchParams.get('error')).toBe('invalid_request');

    const { final, verifier, state } = await authorize(config, jar);
    const code = new URL(final).searchParams.get('code')!;
    // Wrong verifier.
    await expect(
      oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: oc.randomPKCECodeVerifier(), expectedState: state }),
    ).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    // A secret for a public client.
    const withSecret = await fetch(`${issuer}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${publicClient}:whatever`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }),
    });
    expect(withSecret.status).toBe(401);
    expect(((await withSecret.json()) as { error: string }).error).toBe('invalid_client');
  });

  it('a confidential client must use PKCE too, S256 only, unless it was registered without (a legacy app)', async () => {
    const { jar } = await signedIn();
    const config = await rpConfig(confidential.id, confidential.secret);
    const errorOf = async (params: Record<string, string>) => {
      const r = await jar.follow(oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', ...params }).toString());
      const back = new URL(r.final);
      return { error: back.searchParams.get('error'), description: back.searchParams.get('error_description'), code: back.searchParams.get('code') };
    };
    expect(await errorOf({})).toMatchObject({ error: 'invalid_request', description: expect.stringMatching(/PKCE/) });
    // `plain` is refused, whoever asks.
    const verifier = oc.randomPKCECodeVerifier();
    expect(await errorOf({ code_challenge: verifier, code_challenge_method: 'plain' })).toMatchObject({ error: 'invalid_request' });
    const legacy = await t.app.services.oidc.clients.add({ name: 'Legacy', redirect_uris: [REDIRECT], first_party: true, pkce_required: false });
    expect(legacy.client.pkce_required).toBe(false);
    const legacyConfig = await rpConfig(legacy.client.client_id, legacy.client_secret!);
    const r = await jar.follow(oc.buildAuthorizationUrl(legacyConfig, { redirect_uri: REDIRECT, scope: 'openid' }).toString());
    expect(new URL(r.final).searchParams.get('code'), r.final).toBeTruthy();
    const tokens = await oc.authorizationCodeGrant(legacyConfig, new URL(r.final), { idTokenExpected: true });
    expect(tokens.access_token).toBeTruthy();
    // Never for a public client.
    await expect(t.app.services.oidc.clients.add({ name: 'SPA2', redirect_uris: [REDIRECT], public: true, pkce_required: false })).rejects.toMatchObject({
      status: 400,
    });
    await expect(t.app.services.oidc.clients.update(publicClient, { pkce_required: false })).rejects.toMatchObject({ status: 400 });
  });

  it('refuses a wrong redirect URI, a replayed code and a wrong client secret', async () => {
    const { jar } = await signedIn();
    const config = await rpConfig(confidential.id, confidential.secret);
    const bad = oc.buildAuthorizationUrl(config, {
      redirect_uri: 'http://localhost:9999/other',
      scope: 'openid',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    });
    const res = await jar.fetch(bad.toString());
    // Never redirected to an unregistered URI: the error is answered here.
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();

    const { final, verifier, state } = await authorize(config, jar);
    await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    await expect(oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state })).rejects.toMatchObject({
      error: 'invalid_grant',
    });

    const wrong = await rpConfig(confidential.id, 'not-the-secret');
    const again = await authorize(wrong, jar);
    await expect(
      oc.authorizationCodeGrant(wrong, new URL(again.final), { pkceCodeVerifier: again.verifier, expectedState: again.state }),
    ).rejects.toMatchObject({
      status: 401,
    });
  });

  it('a resource indicator gets a JWT access token (RFC 9068) verifiable offline; tampered and alg:none tokens are refused', async () => {
    const { user, jar } = await signedIn();
    // A registered API the client may ask for (oidc-resources.test.ts: what happens otherwise).
    if (!(await t.app.services.oidc.resources.find('https://api.example.test')))
      await t.app.services.oidc.resources.add({ identifier: 'https://api.example.test', name: 'API', scopes: ['read'] });
    await t.app.services.oidc.clients.update(confidential.id, { allowed_resources: ['https://api.example.test'] });
    const config = await rpConfig(confidential.id, confidential.secret);
    const { final, verifier, state } = await authorize(config, jar, { resource: 'https://api.example.test' });
    const tokens = await oc.authorizationCodeGrant(
      config,
      new URL(final),
      { pkceCodeVerifier: verifier, expectedState: state },
      { resource: 'https://api.example.test' },
    );
    const jwks = createRemoteJWKSet(new URL(`${issuer}/oidc/jwks`));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, { issuer, audience: 'https://api.example.test', typ: 'at+jwt' });
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload.sub).toBe(user.id);
    const [h, p, s] = tokens.access_token.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...decodeJwt(tokens.access_token), sub: 'someone-else' })).toString('base64url')}.${s}`;
    await expect(jwtVerify(tampered, jwks, { issuer })).rejects.toThrow();
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${p}.`;
    await expect(jwtVerify(none, jwks, { issuer })).rejects.toThrow();
    // The provider itself refuses both too (introspection: inactive).
    for (const token of [tampered, none]) {
      const r = await fetch(`${issuer}/oidc/token/introspection`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${confidential.id}:${confidential.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ token }),
      });
      // oidc-provider never introspects a structured token (a resource server verifies it offline): never "active".
      expect(((await r.json()) as { active?: boolean }).active).not.toBe(true);
    }
    // An opaque access token one character off is refused at userinfo.
    const opaque = await authorize(config, jar);
    const plain = await oc.authorizationCodeGrant(config, new URL(opaque.final), { pkceCodeVerifier: opaque.verifier, expectedState: opaque.state });
    const off = plain.access_token.slice(0, -1) + (plain.access_token.endsWith('A') ? 'B' : 'A');
    const ui = await fetch(`${issuer}/oidc/userinfo`, { headers: { authorization: `Bearer ${off}` } });
    expect(ui.status).toBe(401);
    // An id_token_hint with alg none is refused at end-session.
    const noneIdToken = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${plain.id_token!.split('.')[1]}.`;
    const es = await fetch(`${issuer}/oidc/session/end?id_token_hint=${noneIdToken}`);
    expect(es.status).toBe(400);
  });

  it('key rotation: tokens signed by the old and the new key both verify during the overlap', async () => {
    const { jar } = await signedIn();
    const config = await rpConfig(confidential.id, confidential.secret);
    const first = await authorize(config, jar);
    const oldTokens = await oc.authorizationCodeGrant(config, new URL(first.final), { pkceCodeVerifier: first.verifier, expectedState: first.state });
    await t.app.services.oidc.rotateKeys(0);
    const kids = (await t.app.services.oidc.keys().list()).map((k) => `${k.alg}:${k.state}`);
    expect(kids.filter((k) => k === 'RS256:retiring')).toHaveLength(1);
    // The instance looks for new keys every 10 s; a later sign-in is signed with the new key.
    await new Promise((r) => setTimeout(r, 10_500));
    const second = await authorize(config, jar);
    const newTokens = await oc.authorizationCodeGrant(config, new URL(second.final), { pkceCodeVerifier: second.verifier, expectedState: second.state });
    const jwks = createRemoteJWKSet(new URL(`${issuer}/oidc/jwks`), { cacheMaxAge: 0, cooldownDuration: 0 });
    const a = await jwtVerify(oldTokens.id_token!, jwks, { issuer });
    const b = await jwtVerify(newTokens.id_token!, jwks, { issuer });
    expect(a.protectedHeader.kid).not.toBe(b.protectedHeader.kid);
  }, 30_000);

  /** RP-initiated logout as a browser does it: the end-session page, then its form with logout=yes. */
  async function endSession(jar: Jar, config: oc.Configuration, idToken: string) {
    const page = await jar.fetch(oc.buildEndSessionUrl(config, { id_token_hint: idToken }).toString());
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('Stay signed in');
    const action = /action="([^"]+)"/.exec(html)![1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1];
    const done = await jar.fetch(new URL(action, issuer).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf, logout: 'yes' }),
    });
    expect([200, 303]).toContain(done.status);
    return { html, done };
  }

  it("the end-session confirmation speaks the user's language, and the signed-out page the browser's", async () => {
    const { jar } = await signedIn({ lang: 'es' });
    const config = await rpConfig(confidential.id, confidential.secret);
    const { final, verifier, state } = await authorize(config, jar);
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    const page = await jar.fetch(oc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token! }).toString());
    const html = await page.text();
    expect(html).toContain('<html lang="es">');
    expect(html).toMatch(/<h1>Cerrar sesión<\/h1>\s*<p>¿Cerrar sesión en [^<]+ y en Gatehouse\?<\/p>/);
    expect(html).toContain('>Mantener la sesión</button>');
    const action = /action="([^"]+)"/.exec(html)![1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1];
    const done = await jar.fetch(new URL(action, issuer).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf, logout: 'yes' }),
    });
    expect(done.status).toBe(303);
    // The session has ended: the signed-out page follows the browser's Accept-Language.
    const success = new URL(done.headers.get('location')!, issuer).toString();
    const es = await (await jar.fetch(success, { headers: { 'accept-language': 'es-MX,es;q=0.9,en;q=0.5' } })).text();
    expect(es).toContain('<html lang="es">');
    expect(es).toMatch(/<h1>Sesión cerrada<\/h1>\s*<p class="note" role="status">Has cerrado sesión/);
  });

  it('end-session ends the Gatehouse session too', async () => {
    const { jar } = await signedIn();
    const config = await rpConfig(confidential.id, confidential.secret);
    const { final, verifier, state } = await authorize(config, jar);
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    const token = jar.cookies.get('session_id')!;
    // GET /auth/me (a session is enough; /auth/user/me needs the bridge secret and would answer 401 either way).
    expect((await t.request('GET', '/auth/me', { session: token })).status).toBe(200);
    await endSession(jar, config, tokens.id_token!);
    const me = await t.request('GET', '/auth/me', { session: token });
    expect(me.status).toBe(401);
    expect(jar.cookies.has('session_id')).toBe(false);
  });

  it('a client registered with keep_session_on_logout (admin API) signs out of itself only; turned off, logout ends the session again', async () => {
    const admin = (await signedIn({ user_type: 'superadmin' })).jar.cookies.get('session_id')!;
    const refused = await t.request('POST', '/auth/admin/oidc/clients', {
      session: admin,
      body: { name: 'Wiki', redirect_uris: [REDIRECT], keep_session_on_logout: 'yes' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.success).toBe(false);
    const created = await t.request('POST', '/auth/admin/oidc/clients', {
      session: admin,
      body: { name: 'Wiki', redirect_uris: [REDIRECT], first_party: true, keep_session_on_logout: true },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body.data.client.keep_session_on_logout).toBe(true);
    const wiki = { id: created.body.data.client.client_id as string, secret: created.body.data.client_secret as string };
    const config = await rpConfig(wiki.id, wiki.secret);

    const signInAndOut = async () => {
      const { jar } = await signedIn();
      const { final, verifier, state } = await authorize(config, jar);
      const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
      const token = jar.cookies.get('session_id')!;
      expect((await t.request('GET', '/auth/me', { session: token })).status).toBe(200);
      await endSession(jar, config, tokens.id_token!);
      return { token, jar };
    };
    const kept = await signInAndOut();
    expect((await t.request('GET', '/auth/me', { session: kept.token })).status).toBe(200);
    expect(kept.jar.cookies.has('session_id')).toBe(true);
    // The provider's own session did end: the next authorization with the Gatehouse session needs no sign-in but is a new login.
    const again = await authorize(config, kept.jar);
    expect(again.final.startsWith(REDIRECT), again.final).toBe(true);

    const off = await t.request('PATCH', `/auth/admin/oidc/clients/${wiki.id}`, { session: admin, body: { keep_session_on_logout: false } });
    expect(off.body.data.client.keep_session_on_logout).toBe(false);
    const ended = await signInAndOut();
    expect((await t.request('GET', '/auth/me', { session: ended.token })).status).toBe(401);
  });

  it('without a session the browser is sent to the hosted login page with a return path', async () => {
    const config = await rpConfig(confidential.id, confidential.secret);
    const jar = createJar();
    const { final } = await authorize(config, jar);
    const u = new URL(final);
    expect(u.pathname).toBe('/login');
    expect(u.searchParams.get('return_to')).toMatch(/^\/oidc\/interaction\/[\w-]+$/);
  });

  it('an interaction visited again after its sign-in finished: a browser gets a page saying so in its language, an API client the JSON error', async () => {
    const { jar } = await signedIn();
    const config = await rpConfig(confidential.id, confidential.secret);
    const { url } = await authorizationRequest(config, REDIRECT, { scope: 'openid', prompt: 'consent' });
    const first = await jar.fetch(url);
    const interaction = new URL(first.headers.get('location')!, url).toString();
    expect(interaction).toMatch(/\/oidc\/interaction\/[\w-]+$/);
    const { final } = await jar.follow(interaction);
    expect(final.startsWith(REDIRECT), final).toBe(true);

    // The back button: the interaction was finished and consumed.
    const page = await jar.fetch(interaction, { headers: { accept: 'text/html,application/xhtml+xml', 'accept-language': 'es' } });
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await page.text();
    expect(html).toContain('<html lang="es">');
    expect(html).toContain('Este inicio de sesión ha caducado');
    const api = await jar.fetch(interaction, { headers: { accept: 'application/json' } });
    expect(api.status).toBe(400);
    expect(await api.json()).toEqual({ success: false, error: expect.stringMatching(/session not found/), code: 'INVALID_REQUEST' });
  });
});

describe('authorization code lifetime (OIDC_CODE_TTL_SECONDS)', () => {
  let op: Awaited<ReturnType<typeof startProviderWithClient>>;

  beforeAll(async () => {
    op = await startProviderWithClient({ OIDC_CODE_TTL_SECONDS: '4' }, REDIRECT);
  }, 60_000);
  afterAll(async () => {
    await op?.close();
  });

  it('a code is refused after its lifetime', async () => {
    const { user, jar } = await signedInJar(op.t, op.front.url);
    const config = await op.rp();
    const code = async () => {
      const { final, verifier, state } = await authorizeWith(config, jar, { scope: 'openid' });
      expect(new URL(final).searchParams.get('code'), final).toBeTruthy();
      return { final: new URL(final), verifier, state };
    };
    // Within its lifetime: accepted (the setting does not break the flow). Four seconds, not one: on a loaded
    // machine the authorize redirects and the exchange alone took longer than a second.
    const fresh = await code();
    expect(
      (await oc.authorizationCodeGrant(config, fresh.final, { pkceCodeVerifier: fresh.verifier, expectedState: fresh.state, idTokenExpected: true })).claims()!
        .sub,
    ).toBe(user.id);
    const late = await code();
    await new Promise((r) => setTimeout(r, 4600));
    await expect(oc.authorizationCodeGrant(config, late.final, { pkceCodeVerifier: late.verifier, expectedState: late.state })).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });
});
