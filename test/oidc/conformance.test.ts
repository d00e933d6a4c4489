import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { BACKEND } from '../helpers/backend.js';
import { DEFAULT_PASSWORD } from '../helpers/factories.js';
import { authorizationRequest, signedInJar, startFront, type Jar } from '../helpers/oidc-rp.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { startReceiver, WEBHOOK_TEST_ENV, type Receiver } from '../helpers/webhook-receiver.js';

const REDIRECT = 'http://localhost:9999/cb';
const LOGGED_OUT = 'http://localhost:9999/logged-out';
const LOGGED_OUT_QUERY = 'http://localhost:9999/logged-out?foo=bar';

/**
 * The OpenID Foundation's conformance test plans for the profiles Gatehouse claims — Basic OP, Config OP,
 * RP-Initiated Logout OP and Back-Channel Logout OP — one test per module that applies, named after it, with
 * openid-client (and plain requests where a module sends what a library would not) as the relying party.
 * A module that does not apply asserts what Gatehouse answers instead (docs/oidc.md, "Conformance").
 */
describe(`OpenID conformance modules (${BACKEND})`, () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let t: TestApp;
  let receiver: Receiver;
  let basic: { id: string; secret: string };
  let post: { id: string; secret: string };
  let es256: { id: string; secret: string };

  beforeAll(async () => {
    front = await startFront();
    receiver = await startReceiver();
    t = await startTestApp({ env: { PUBLIC_URL: front.url, ...WEBHOOK_TEST_ENV } });
    await front.target(Number(new URL(t.url).port));
    t.app.services.webhooks.startWorker();
    const clients = t.app.services.oidc.clients;
    const b = await clients.add({
      name: 'Conformance',
      redirect_uris: [REDIRECT],
      post_logout_redirect_uris: [LOGGED_OUT, LOGGED_OUT_QUERY],
      first_party: true,
      backchannel_logout_uri: receiver.url,
    });
    basic = { id: b.client.client_id, secret: b.client_secret! };
    const p = await clients.add({ name: 'Post', redirect_uris: [REDIRECT], first_party: true, token_endpoint_auth_method: 'client_secret_post' });
    post = { id: p.client.client_id, secret: p.client_secret! };
    const e = await clients.add({ name: 'EC', redirect_uris: [REDIRECT], first_party: true, id_token_alg: 'ES256' });
    es256 = { id: e.client.client_id, secret: e.client_secret! };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await front?.close();
    await receiver?.close();
  });

  const rp = (c = basic, auth: 'basic' | 'post' = 'basic') =>
    oc.discovery(new URL(front.url), c.id, undefined, auth === 'post' ? oc.ClientSecretPost(c.secret) : oc.ClientSecretBasic(c.secret), {
      execute: [oc.allowInsecureRequests],
    });
  const jwks = () => createRemoteJWKSet(new URL(`${front.url}/oidc/jwks`));
  const signedIn = () => signedInJar(t, front.url);

  /** An authorization request followed with the jar to where it leaves the provider (the client) or stops (a page). */
  async function authorize(config: oc.Configuration, jar: Jar, params: Record<string, string> = {}) {
    const { url, verifier, state } = await authorizationRequest(config, REDIRECT, { scope: 'openid', ...params });
    const { final, res } = await jar.follow(url);
    return { final, res, verifier, state };
  }
  /** Signs in, authorizes and redeems the code. */
  async function codeFlow(params: Record<string, string> = {}, c = basic, auth: 'basic' | 'post' = 'basic') {
    const config = await rp(c, auth);
    const { user, jar } = await signedIn();
    const a = await authorize(config, jar, params);
    expect(a.final.startsWith(REDIRECT), a.final).toBe(true);
    const tokens = await oc.authorizationCodeGrant(config, new URL(a.final), {
      pkceCodeVerifier: a.verifier,
      expectedState: a.state,
      expectedNonce: params.nonce,
    });
    return { config, user, jar, tokens, claims: tokens.claims()! };
  }
  const errorOf = (final: string) => new URL(final).searchParams.get('error');
  /** The jar signs in again (a new Gatehouse session) and returns to the interaction it was sent to sign in for. */
  async function signInAgainAndReturn(jar: Jar, loginPage: string, email: string) {
    const returnTo = new URL(loginPage).searchParams.get('return_to')!;
    const res = await jar.fetch(`${front.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: DEFAULT_PASSWORD }),
    });
    expect(res.status).toBe(200);
    return (await jar.follow(new URL(returnTo, front.url).toString())).final;
  }

  describe('Basic OP', () => {
    it('oidcc-server: the code flow; the ID token verifies against JWKS with iss, aud, sub, exp, iat and the nonce', async () => {
      const { user, claims, tokens } = await codeFlow({ nonce: 'n-0S6_WzA2Mj' });
      const { payload } = await jwtVerify(tokens.id_token!, jwks(), { issuer: front.url, audience: basic.id });
      expect(payload).toMatchObject({ sub: user.id, nonce: 'n-0S6_WzA2Mj' });
      expect(claims.exp).toBeGreaterThan(claims.iat);
    });

    it('oidcc-response-type-missing: an authorization request without response_type is refused to the client as invalid_request', async () => {
      const config = await rp();
      const { jar } = await signedIn();
      const { url } = await authorizationRequest(config, REDIRECT, { scope: 'openid' });
      const u = new URL(url);
      u.searchParams.delete('response_type');
      const { final } = await jar.follow(u.toString());
      expect(errorOf(final)).toBe('invalid_request');
    });

    it('oidcc-userinfo-get: UserInfo by GET with the bearer token', async () => {
      const { user, tokens } = await codeFlow();
      const res = await fetch(`${front.url}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ sub: user.id });
    });

    it('oidcc-userinfo-post-header: UserInfo by POST with the bearer token in the header', async () => {
      const { user, tokens } = await codeFlow();
      const res = await fetch(`${front.url}/oidc/userinfo`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ sub: user.id });
    });

    it('oidcc-userinfo-post-body: UserInfo by POST with the token in a form body (RFC 6750 §2.2)', async () => {
      const { user, tokens } = await codeFlow();
      const res = await fetch(`${front.url}/oidc/userinfo`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ access_token: tokens.access_token }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ sub: user.id });
    });

    it('oidcc-ensure-request-without-nonce-succeeds-for-code-flow', async () => {
      const { claims } = await codeFlow();
      expect(claims.nonce).toBeUndefined();
    });

    it('oidcc-scope-profile, oidcc-scope-email, oidcc-scope-phone, oidcc-scope-all: UserInfo answers the claims of each scope', async () => {
      const { user, config, tokens } = await codeFlow({ scope: 'openid profile email phone' });
      const info = await oc.fetchUserInfo(config, tokens.access_token, user.id);
      expect(info).toMatchObject({ sub: user.id, email: user.email, email_verified: expect.any(Boolean) });
      expect(info).toHaveProperty('updated_at');
      expect(Object.keys(info)).toEqual(expect.arrayContaining(['name', 'email', 'email_verified']));
    });

    it('oidcc-scope-address: not applicable — address is not a supported scope (discovery omits it) and asking for it changes nothing', async () => {
      const config = await rp();
      expect(config.serverMetadata().scopes_supported).not.toContain('address');
      const { user, tokens } = await codeFlow({ scope: 'openid address' });
      const info = await oc.fetchUserInfo(config, tokens.access_token, user.id);
      expect(info.address).toBeUndefined();
    });

    it('oidcc-ensure-other-scope-order-succeeds: scopes in another order', async () => {
      const { user, config, tokens } = await codeFlow({ scope: 'email openid' });
      expect((await oc.fetchUserInfo(config, tokens.access_token, user.id)).email).toBe(user.email);
    });

    it('oidcc-display-page, oidcc-display-popup: the display parameter is accepted', async () => {
      for (const display of ['page', 'popup']) expect((await codeFlow({ display })).claims.sub).toBeTruthy();
    });

    it('oidcc-prompt-login: a signed-in browser is asked to sign in again, and the new sign-in is what the ID token says', async () => {
      const first = await codeFlow({ max_age: '100000' });
      const again = await authorize(first.config, first.jar, { prompt: 'login', max_age: '100000' });
      expect(new URL(again.final).pathname).toBe('/login');
      expect(new URL(again.final).searchParams.get('reauth')).toBe('1');
      await new Promise((r) => setTimeout(r, 1_100));
      const final = await signInAgainAndReturn(first.jar, again.final, first.user.email);
      const tokens = await oc.authorizationCodeGrant(first.config, new URL(final), { pkceCodeVerifier: again.verifier, expectedState: again.state });
      expect(tokens.claims()!.auth_time).toBeGreaterThan(first.claims.auth_time!);
    });

    it('oidcc-prompt-none-not-logged-in: login_required to the client, no page', async () => {
      const config = await rp();
      const jar = (await signedIn()).jar;
      jar.cookies.clear();
      const { final } = await authorize(config, jar, { prompt: 'none' });
      expect(errorOf(final)).toBe('login_required');
    });

    it('oidcc-prompt-none-logged-in: a code without any page', async () => {
      const first = await codeFlow();
      const { final, verifier, state } = await authorize(first.config, first.jar, { prompt: 'none' });
      const tokens = await oc.authorizationCodeGrant(first.config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
      expect(tokens.claims()!.sub).toBe(first.user.id);
    });

    it('oidcc-max-age-1: a sign-in older than a second asks for a new one', async () => {
      const first = await codeFlow();
      await new Promise((r) => setTimeout(r, 2_100));
      const again = await authorize(first.config, first.jar, { max_age: '1' });
      expect(new URL(again.final).pathname).toBe('/login');
      const before = Math.floor(Date.now() / 1000);
      // A sign-in more than a second old by the time the browser is back is asked for again (that is max_age=1):
      // on a loaded host the round trip can take that long, so the browser signs in again, as a person would.
      let final = again.final;
      for (let i = 0; i < 3 && !final.startsWith(REDIRECT); i++) final = await signInAgainAndReturn(first.jar, final, first.user.email);
      const tokens = await oc.authorizationCodeGrant(first.config, new URL(final), { pkceCodeVerifier: again.verifier, expectedState: again.state });
      // The new sign-in's time, not the first one's (no bound on how long a loaded host takes to get here).
      expect(tokens.claims()!.auth_time).toBeGreaterThanOrEqual(before);
      expect(tokens.claims()!.auth_time).toBeGreaterThan(first.claims.auth_time ?? 0);
    });

    it('oidcc-max-age-10000: the ID token carries auth_time', async () => {
      const { claims } = await codeFlow({ max_age: '10000' });
      expect(claims.auth_time).toEqual(expect.any(Number));
    });

    it('oidcc-ensure-request-with-unknown-parameter-succeeds', async () => {
      expect((await codeFlow({ extra: 'foobar' })).claims.sub).toBeTruthy();
    });

    it('oidcc-id-token-hint: prompt=none with the ID token as hint answers a code for the same user', async () => {
      const first = await codeFlow();
      const { final, verifier, state } = await authorize(first.config, first.jar, { prompt: 'none', id_token_hint: first.tokens.id_token! });
      const tokens = await oc.authorizationCodeGrant(first.config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
      expect(tokens.claims()!.sub).toBe(first.user.id);
    });

    it('oidcc-login-hint, oidcc-ui-locales, oidcc-claims-locales: accepted', async () => {
      const { claims } = await codeFlow({ login_hint: 'someone@example.com', ui_locales: 'es', claims_locales: 'es' });
      expect(claims.sub).toBeTruthy();
    });

    it('oidcc-ensure-request-with-acr-values-succeeds: the ID token names the acr', async () => {
      const { claims } = await codeFlow({ acr_values: 'urn:gatehouse:acr:2fa urn:gatehouse:acr:1fa' });
      expect(claims.acr).toBe('urn:gatehouse:acr:1fa');
    });

    it('oidcc-codereuse, oidcc-codereuse-30seconds: a code redeemed twice is refused and what it issued is revoked (at any time, not only within 30 s)', async () => {
      const config = await rp();
      const { jar } = await signedIn();
      const a = await authorize(config, jar);
      const tokens = await oc.authorizationCodeGrant(config, new URL(a.final), { pkceCodeVerifier: a.verifier, expectedState: a.state });
      const again = await oc
        .authorizationCodeGrant(config, new URL(a.final), { pkceCodeVerifier: a.verifier, expectedState: a.state })
        .catch((e: { error?: string }) => e.error);
      expect(again).toBe('invalid_grant');
      const res = await fetch(`${front.url}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(res.status).toBe(401);
    });

    it('oidcc-ensure-registered-redirect-uri: an unregistered redirect_uri gets an error page, never a redirect', async () => {
      const config = await rp();
      const { jar } = await signedIn();
      const { url } = await authorizationRequest(config, 'http://localhost:9999/elsewhere', { scope: 'openid' });
      const { final, res } = await jar.follow(url);
      expect(final.startsWith(front.url)).toBe(true);
      expect(res.status).toBe(400);
    });

    it('oidcc-ensure-redirect-uri-in-authorization-request: a request without redirect_uri is refused, not redirected', async () => {
      const config = await rp();
      const { jar } = await signedIn();
      const { url } = await authorizationRequest(config, REDIRECT, { scope: 'openid' });
      const u = new URL(url);
      u.searchParams.delete('redirect_uri');
      const { final, res } = await jar.follow(u.toString());
      expect(final.startsWith(front.url)).toBe(true);
      expect(res.status).toBe(400);
    });

    it('oidcc-server-client-secret-post: a client registered for client_secret_post', async () => {
      const { claims } = await codeFlow({}, post, 'post');
      expect(claims.aud).toBe(post.id);
    });

    it('oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported: rejected as request_not_supported', async () => {
      const config = await rp();
      const { jar } = await signedIn();
      const { final } = await authorize(config, jar, { request: 'eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCJ9.' });
      expect(errorOf(final)).toBe('request_not_supported');
      expect(config.serverMetadata().request_parameter_supported).not.toBe(true);
    });

    it('oidcc-ensure-request-object-with-redirect-uri: not applicable — request objects are not supported (discovery says so)', async () => {
      const config = await rp();
      expect(config.serverMetadata().request_parameter_supported).not.toBe(true);
      expect(config.serverMetadata().request_uri_parameter_supported).not.toBe(true);
    });

    it('oidcc-claims-essential: not applicable — the claims parameter is not supported (discovery says so); the request still succeeds', async () => {
      const config = await rp();
      expect(config.serverMetadata().claims_parameter_supported).not.toBe(true);
      const { user, tokens } = await codeFlow({ scope: 'openid profile', claims: JSON.stringify({ userinfo: { name: { essential: true } } }) });
      expect((await oc.fetchUserInfo(config, tokens.access_token, user.id)).sub).toBe(user.id);
    });

    it('oidcc-refresh-token: a refresh rotates the token, keeps the user, and the old token is refused', async () => {
      const { config, user, tokens } = await codeFlow({ scope: 'openid offline_access', prompt: 'consent' });
      expect(tokens.refresh_token).toBeTruthy();
      const next = await oc.refreshTokenGrant(config, tokens.refresh_token!);
      expect(next.claims()!.sub).toBe(user.id);
      expect(next.refresh_token).not.toBe(tokens.refresh_token);
      const old = await oc.refreshTokenGrant(config, tokens.refresh_token!).catch((e: { error?: string }) => e.error);
      expect(old).toBe('invalid_grant');
    });

    it('oidcc-ensure-request-with-valid-pkce-succeeds, and a wrong verifier fails', async () => {
      const config = await rp();
      const { jar } = await signedIn();
      const a = await authorize(config, jar);
      const wrong = await oc
        .authorizationCodeGrant(config, new URL(a.final), { pkceCodeVerifier: oc.randomPKCECodeVerifier(), expectedState: a.state })
        .catch((e: { error?: string }) => e.error);
      expect(wrong).toBe('invalid_grant');
      expect((await codeFlow()).claims.sub).toBeTruthy();
    });

    it('oidcc-ensure-post-request-succeeds: a decision — the authorization endpoint takes GET only; a POST is 404', async () => {
      // oidc-provider 9 serves POST there only with its session cookie SameSite=None (sent with every cross-site
      // request, and refused by browsers without https); Gatehouse keeps Lax cookies (docs/oidc.md, Conformance).
      const config = await rp();
      const { url } = await authorizationRequest(config, REDIRECT, { scope: 'openid' });
      const u = new URL(url);
      const res = await fetch(`${u.origin}${u.pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: u.searchParams.toString(),
      });
      expect(res.status).toBe(404);
    });

    it('oidcc-idtoken-signature: RS256 by default, ES256 for a client registered so, each verifying against JWKS', async () => {
      const rs = await codeFlow();
      expect(decodeProtectedHeader(rs.tokens.id_token!).alg).toBe('RS256');
      const ec = await codeFlow({}, es256);
      expect(decodeProtectedHeader(ec.tokens.id_token!).alg).toBe('ES256');
      await jwtVerify(ec.tokens.id_token!, jwks(), { issuer: front.url, audience: es256.id });
    });
  });

  describe('Config OP', () => {
    it('oidcc-discovery-endpoint-verification: the required members, the issuer equal to the URL it is read from', async () => {
      const d = (await (await fetch(`${front.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(d.issuer).toBe(front.url);
      for (const k of [
        'authorization_endpoint',
        'token_endpoint',
        'jwks_uri',
        'response_types_supported',
        'subject_types_supported',
        'id_token_signing_alg_values_supported',
      ])
        expect(d[k], k).toBeTruthy();
      expect(d.id_token_signing_alg_values_supported).toContain('RS256');
      expect(d.scopes_supported).toContain('openid');
    });

    it('oidcc-idtoken-rs256: the ID token of a default client is RS256 with a kid in JWKS', async () => {
      const { tokens } = await codeFlow();
      const header = decodeProtectedHeader(tokens.id_token!);
      const set = (await (await fetch(`${front.url}/oidc/jwks`)).json()) as { keys: { kid: string }[] };
      expect(header.alg).toBe('RS256');
      expect(set.keys.map((k) => k.kid)).toContain(header.kid);
    });
  });

  describe('RP-Initiated Logout OP', () => {
    /** Opens the end-session URL, confirms on the page, and returns where the browser ends. */
    async function endSession(jar: Jar, params: Record<string, string>) {
      const url = new URL(`${front.url}/oidc/session/end`);
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      const page = await jar.follow(url.toString());
      if (page.final.startsWith('http://localhost:9999')) return page;
      const html = await page.res.text();
      const action = /action="([^"]+)"/.exec(html)?.[1];
      if (!action) return page;
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1];
      return jar.follow(new URL(action, front.url).toString(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: front.url },
        body: new URLSearchParams({ xsrf, logout: 'yes' }),
      });
    }

    it('oidcc-rp-initiated-logout: with id_token_hint, post_logout_redirect_uri and state the browser returns with the state', async () => {
      const { jar, tokens } = await codeFlow();
      const { final } = await endSession(jar, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT, state: 's-42' });
      expect(final).toBe(`${LOGGED_OUT}?state=s-42`);
    });

    it('oidcc-rp-initiated-logout-no-state: the browser returns without a state', async () => {
      const { jar, tokens } = await codeFlow();
      expect((await endSession(jar, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT })).final).toBe(LOGGED_OUT);
    });

    it('oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri: the registered query is kept', async () => {
      const { jar, tokens } = await codeFlow();
      const { final } = await endSession(jar, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT_QUERY, state: 'x' });
      expect(new URL(final).searchParams.get('foo')).toBe('bar');
      expect(new URL(final).searchParams.get('state')).toBe('x');
    });

    it('oidcc-rp-initiated-logout-bad-post-logout-redirect-uri: an unregistered URI is refused, never followed', async () => {
      const { jar, tokens } = await codeFlow();
      const { final, res } = await endSession(jar, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'http://localhost:9999/evil' });
      expect(final.startsWith(front.url)).toBe(true);
      expect(res.status).toBe(400);
    });

    it('oidcc-rp-initiated-logout-modified-id-token-hint: a tampered hint is refused', async () => {
      const { jar, tokens } = await codeFlow();
      const [h, p, s] = tokens.id_token!.split('.');
      const tampered = `${h}.${p}.${s.slice(0, -4)}AAAA`;
      const { final, res } = await endSession(jar, { id_token_hint: tampered, post_logout_redirect_uri: LOGGED_OUT });
      expect(final.startsWith(front.url)).toBe(true);
      expect(res.status).toBe(400);
    });

    it('oidcc-rp-initiated-logout-no-id-token-hint: a post-logout URI without a hint or client_id is never followed', async () => {
      const { jar } = await codeFlow();
      const { final } = await endSession(jar, { post_logout_redirect_uri: LOGGED_OUT });
      // Not followed: the OP cannot tell whose URI it is. (The browser is asked, and signed out on this page.)
      expect(final.startsWith(front.url)).toBe(true);
      expect(final).not.toContain('logged-out');
    });

    it('oidcc-rp-initiated-logout-no-params, oidcc-rp-initiated-logout-no-post-logout-redirect-uri, oidcc-rp-initiated-logout-only-state: the signed-out page, no redirect', async () => {
      for (const params of [{}, { id_token_hint: '' }, { state: 'only' }] as Record<string, string>[]) {
        const { jar, tokens } = await codeFlow();
        const p = 'id_token_hint' in params ? { id_token_hint: tokens.id_token! } : params;
        const { final, res } = await endSession(jar, p);
        expect(final.startsWith(front.url), JSON.stringify(params)).toBe(true);
        expect(res.status).toBe(200);
        expect(await res.text()).toContain('signed out');
        expect(jar.cookies.has('session_id')).toBe(false);
      }
    });
  });

  describe('Back-Channel Logout OP', () => {
    it('oidcc-backchannel-rp-initiated-logout: the client is POSTed a logout token naming the sid of its ID token', async () => {
      const { jar, tokens, claims, user } = await codeFlow();
      expect(claims.sid).toBeTruthy();
      const url = new URL(`${front.url}/oidc/session/end`);
      url.searchParams.set('id_token_hint', tokens.id_token!);
      const html = await (await jar.fetch(url.toString())).text();
      const action = /action="([^"]+)"/.exec(html)![1];
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1];
      await jar.fetch(new URL(action, front.url).toString(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: front.url },
        body: new URLSearchParams({ xsrf, logout: 'yes' }),
      });
      const mine = () => receiver.received.map((r) => new URLSearchParams(r.body).get('logout_token')!).filter((tk) => decodeJwt(tk).sub === user.id);
      await expect.poll(() => mine().length, { timeout: 10_000 }).toBe(1);
      const { payload } = await jwtVerify(mine()[0], jwks(), { issuer: front.url, audience: basic.id, typ: 'logout+jwt' });
      expect(payload).toMatchObject({ sid: claims.sid, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } });
      expect(payload.nonce).toBeUndefined();
    });
  });
});
