import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { authorizationRequest, signedInJar, startFront, type Jar } from '../helpers/oidc-rp.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const REDIRECT = 'http://localhost:9999/cb';
const API = 'https://api.example.test';
const OTHER = 'https://billing.example.test';

/**
 * Registered APIs (resource servers, RFC 8707): only an API registered with `oidc resource add` and on the
 * client's own allow-list gets a JWT access token (RFC 9068) with it as audience and only its scopes the
 * user consented to; anything else is `invalid_target`, so a client a user approved cannot mint a token for
 * an API it was never meant for (a confused deputy).
 */
describe(`registered APIs for the OpenID provider (${BACKEND})`, () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let t: TestApp;
  let superadmin: string;
  let client: { id: string; secret: string };

  beforeAll(async () => {
    front = await startFront();
    t = await startTestApp({ env: { PUBLIC_URL: front.url } });
    await front.target(Number(new URL(t.url).port));
    superadmin = (await makeSession(t, { user_type: 'superadmin' })).token;
    const c = await t.app.services.oidc.clients.add({ name: 'App', redirect_uris: [REDIRECT], first_party: true });
    client = { id: c.client.client_id, secret: c.client_secret! };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await front?.close();
  });

  const admin = (method: string, path: string, body?: unknown, session = superadmin) =>
    t.request(method, `/auth/admin/oidc/resources${path}`, { session, body });
  const rp = (id = client.id, secret = client.secret) =>
    oc.discovery(new URL(front.url), id, undefined, oc.ClientSecretBasic(secret), { execute: [oc.allowInsecureRequests] });
  /** An authorization request with `params` through a signed-in jar: the redirect's query. */
  async function authorize(config: oc.Configuration, jar: Jar, params: Record<string, string>) {
    const { url, verifier, state } = await authorizationRequest(config, REDIRECT, params);
    const { final } = await jar.follow(url);
    return { final, back: new URL(final).searchParams, verifier, state };
  }

  it('the admin API registers, lists, shows, updates and removes APIs (superadmin only), each change audited', async () => {
    const created = await admin('POST', '', { identifier: API, name: 'Things API', scopes: ['read:things', 'write:things'], access_token_ttl: 600 });
    expect(created.status, created.text).toBe(200);
    expect(created.body.data.resource).toMatchObject({ identifier: API, name: 'Things API', scopes: ['read:things', 'write:things'], access_token_ttl: 600 });
    expect((await admin('POST', '', { identifier: API, name: 'Again', scopes: ['x'] })).status).toBe(409);
    expect((await admin('GET', '')).body.data.resources.map((r: { identifier: string }) => r.identifier)).toContain(API);
    const path = `/${encodeURIComponent(API)}`;
    expect((await admin('GET', path)).body.data.resource.name).toBe('Things API');
    const updated = await admin('PATCH', path, { name: 'Things' });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.data.resource).toMatchObject({ name: 'Things', scopes: ['read:things', 'write:things'] });
    expect((await admin('GET', `/${encodeURIComponent('https://nothing.example.test')}`)).status).toBe(404);
    // A plain admin may not.
    const plainAdmin = (await makeSession(t, { user_type: 'admin' })).token;
    expect((await admin('GET', '', undefined, plainAdmin)).status).toBe(403);
    expect((await admin('POST', '', { identifier: OTHER, name: 'x', scopes: ['x'] }, plainAdmin)).status).toBe(403);
    const audit = await t.app.services.audit.list({ types: ['oidc.resource_created', 'oidc.resource_updated'] } as never);
    expect(audit.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['oidc.resource_created', 'oidc.resource_updated']));
  });

  it('bad input is a 400 naming the field, and nothing is written', async () => {
    for (const body of [
      { identifier: 'http://api.example.test', name: 'x', scopes: ['a'] },
      { identifier: 'https://api.example.test/#frag', name: 'x', scopes: ['a'] },
      { identifier: 'not a url', name: 'x', scopes: ['a'] },
      { identifier: 'https://q.example.test/?a=1', name: 'x', scopes: ['a'] },
      { identifier: 'https://s.example.test', name: 'x', scopes: ['email'] },
      { identifier: 'https://s.example.test', name: 'x', scopes: ['a', 'a'] },
      { identifier: 'https://s.example.test', name: 'x', scopes: ['has space'] },
      { identifier: 'https://s.example.test', name: 'x', scopes: [] },
      { identifier: 'https://s.example.test', name: 'x', scopes: ['a'], access_token_ttl: 10 },
      { identifier: 'https://s.example.test', name: 'x', scopes: ['a'], extra: true },
      { identifier: 'https://s.example.test', name: '', scopes: ['a'] },
    ]) {
      const r = await admin('POST', '', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toMatchObject({ success: false, code: expect.any(String), error: expect.any(String) });
    }
    expect((await admin('GET', `/${encodeURIComponent('https://s.example.test')}`)).status).toBe(404);
    // A client may be allowed only a registered API.
    const r = await t.request('PATCH', `/auth/admin/oidc/clients/${client.id}`, { session: superadmin, body: { allowed_resources: [OTHER] } });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain(OTHER);
  });

  it('a client asking for an API not on its allow-list, or an unregistered one, gets invalid_target', async () => {
    const { jar } = await signedInJar(t, front.url);
    const config = await rp();
    expect((await t.app.services.oidc.clients.get(client.id)).allowed_resources).toEqual([]);
    for (const resource of [API, 'https://unregistered.example.test']) {
      const { back } = await authorize(config, jar, { scope: 'openid read:things', resource });
      expect(back.get('error'), resource).toBe('invalid_target');
      expect(back.get('code')).toBeNull();
    }
    // At the token endpoint too: a code obtained without a resource cannot be exchanged for one.
    const plain = await authorize(config, jar, { scope: 'openid' });
    await expect(
      oc.authorizationCodeGrant(config, new URL(plain.final), { pkceCodeVerifier: plain.verifier, expectedState: plain.state }, { resource: API }),
    ).rejects.toMatchObject({ error: 'invalid_target' });
  });

  it("an allowed API gets a JWT access token with it as audience, only its scopes that were asked for, and the API's lifetime", async () => {
    await t.app.services.oidc.clients.update(client.id, { allowed_resources: [API] });
    const { user, jar } = await signedInJar(t, front.url);
    const config = await rp();
    const { final, verifier, state, back } = await authorize(config, jar, { scope: 'openid profile read:things', resource: API });
    expect(back.get('code'), final).toBeTruthy();
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state }, { resource: API });
    const jwks = createRemoteJWKSet(new URL(`${front.url}/oidc/jwks`));
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer: front.url, audience: API, typ: 'at+jwt' });
    expect(payload.sub).toBe(user.id);
    // write:things was not asked for; profile is not the API's.
    expect(String(payload.scope).split(' ').sort()).toEqual(['read:things']);
    expect(payload.exp! - payload.iat!).toBe(600);
    // Another client with no allow-list still cannot, though the API is registered.
    const other = await t.app.services.oidc.clients.add({ name: 'Other', redirect_uris: [REDIRECT], first_party: true });
    const { back: refused } = await authorize(await rp(other.client.client_id, other.client_secret!), jar, { scope: 'openid read:things', resource: API });
    expect(refused.get('error')).toBe('invalid_target');
  });

  it("a third-party client's consent page names the API and its scopes; removing the API takes it off the client's list", async () => {
    const third = await t.app.services.oidc.clients.add({ name: 'Third', redirect_uris: [REDIRECT] });
    await t.app.services.oidc.clients.update(third.client.client_id, { allowed_resources: [API] });
    const { jar } = await signedInJar(t, front.url);
    const config = await rp(third.client.client_id, third.client_secret!);
    const { url } = await authorizationRequest(config, REDIRECT, { scope: 'openid read:things write:things', resource: API });
    const { res } = await jar.follow(url);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('access to Things: read:things, write:things');

    expect((await admin('DELETE', `/${encodeURIComponent(API)}`)).status).toBe(200);
    expect((await t.app.services.oidc.clients.get(third.client.client_id)).allowed_resources).toEqual([]);
    expect((await t.app.services.oidc.clients.get(client.id)).allowed_resources).toEqual([]);
    const audit = await t.app.services.audit.list({ types: ['oidc.resource_removed'] } as never);
    expect(audit.events).toHaveLength(1);
  });
});
