import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { QueryTypes } from 'sequelize';
import { hashSecret } from '../../src/oidc/clients.js';
import { BACKEND } from '../helpers/backend.js';
import { authorizationRequest, signedInJar, startFront } from '../helpers/oidc-rp.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const REDIRECT = 'http://localhost:9999/cb';

/**
 * How clients authenticate and what they may ask about tokens: secrets kept as hashes through the hook
 * oidc-provider offers (Client.prototype.compareClientSecret; a library upgrade that stopped calling it
 * would fail here), the registered method enforced, introspection and revocation of one's own tokens only,
 * and the ID token's algorithm per client.
 */
describe(`OpenID client authentication and token policies (${BACKEND})`, () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let t: TestApp;
  let basic: { id: string; secret: string };
  let post: { id: string; secret: string };
  let other: { id: string; secret: string };

  beforeAll(async () => {
    front = await startFront();
    t = await startTestApp({ env: { PUBLIC_URL: front.url } });
    await front.target(Number(new URL(t.url).port));
    const add = async (name: string, extra: Record<string, unknown> = {}) => {
      const c = await t.app.services.oidc.clients.add({ name, redirect_uris: [REDIRECT], first_party: true, ...extra });
      return { id: c.client.client_id, secret: c.client_secret! };
    };
    basic = await add('Basic');
    post = await add('Post', { token_endpoint_auth_method: 'client_secret_post' });
    other = await add('Other');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await front?.close();
  });

  /** A client_credentials request to the token endpoint with the secret where `how` says. */
  const tokenWith = (c: { id: string; secret: string }, how: 'basic' | 'post', secret = c.secret) =>
    fetch(`${front.url}/oidc/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(how === 'basic' ? { authorization: `Basic ${Buffer.from(`${c.id}:${secret}`).toString('base64')}` } : {}),
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...(how === 'post' ? { client_id: c.id, client_secret: secret } : {}) }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));

  it('only the hash of a secret is stored; the secret authenticates, the stored hash presented as a secret does not', async () => {
    const [row] = await t.app.sequelize.query<{ secret_hash: string }>('SELECT secret_hash FROM oidc_clients WHERE client_id = ?', {
      type: QueryTypes.SELECT,
      replacements: [basic.id],
    });
    expect(row.secret_hash).toBe(hashSecret(basic.secret));
    expect(JSON.stringify(row)).not.toContain(basic.secret);
    expect((await tokenWith(basic, 'basic')).status).toBe(200);
    // Were oidc-provider to stop calling the hook, its own comparison would take the stored hash for the secret.
    const withHash = await tokenWith(basic, 'basic', row.secret_hash);
    expect(withHash.status).toBe(401);
    expect(withHash.body.error).toBe('invalid_client');
    expect((await tokenWith(basic, 'basic', `${basic.secret}x`)).status).toBe(401);
  });

  it('a client authenticates only the way it was registered (--token-auth): basic, or post', async () => {
    expect((await tokenWith(basic, 'basic')).status).toBe(200);
    const basicByPost = await tokenWith(basic, 'post');
    expect(basicByPost.status).toBe(401);
    expect(basicByPost.body).toMatchObject({ error: 'invalid_client' });
    expect((await tokenWith(post, 'post')).status).toBe(200);
    const postByBasic = await tokenWith(post, 'basic');
    expect(postByBasic.status).toBe(401);
    expect(postByBasic.body.error).toBe('invalid_client');
  });

  /** Tokens for a signed-in user through `c` (access and refresh). */
  async function tokensOf(c: { id: string; secret: string }) {
    const config = await oc.discovery(new URL(front.url), c.id, undefined, oc.ClientSecretBasic(c.secret), { execute: [oc.allowInsecureRequests] });
    const { jar } = await signedInJar(t, front.url);
    const { url, verifier, state } = await authorizationRequest(config, REDIRECT, { scope: 'openid offline_access', prompt: 'consent' });
    const { final } = await jar.follow(url);
    return { config, tokens: await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state }) };
  }
  const introspect = (c: { id: string; secret: string }, token: string) =>
    fetch(`${front.url}/oidc/token/introspection`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}` },
      body: new URLSearchParams({ token }),
    }).then(async (r) => (await r.json()) as { active: boolean; client_id?: string });

  it('a client introspects its own tokens only: another confidential client learns nothing of them, refresh tokens included, nor can it revoke them', async () => {
    const { tokens } = await tokensOf(basic);
    expect(await introspect(basic, tokens.access_token)).toMatchObject({ active: true, client_id: basic.id });
    expect(await introspect(basic, tokens.refresh_token!)).toMatchObject({ active: true });
    expect(await introspect(other, tokens.access_token)).toEqual({ active: false });
    expect(await introspect(other, tokens.refresh_token!)).toEqual({ active: false });
    const revoke = await fetch(`${front.url}/oidc/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${other.id}:${other.secret}`).toString('base64')}` },
      body: new URLSearchParams({ token: tokens.refresh_token! }),
    });
    expect(revoke.status).toBe(400);
    expect(await introspect(basic, tokens.refresh_token!)).toMatchObject({ active: true });
  });

  it('a client registered with --id-token-alg ES256 gets ES256 ID tokens that verify against the JWKS; others RS256', async () => {
    const es = await t.app.services.oidc.clients.add({ name: 'ES', redirect_uris: [REDIRECT], first_party: true, id_token_alg: 'ES256' });
    expect(es.client.id_token_alg).toBe('ES256');
    const esClient = { id: es.client.client_id, secret: es.client_secret! };
    const jwks = createRemoteJWKSet(new URL(`${front.url}/oidc/jwks`));
    const signed = await tokensOf(esClient);
    expect(decodeProtectedHeader(signed.tokens.id_token!).alg).toBe('ES256');
    await jwtVerify(signed.tokens.id_token!, jwks, { issuer: front.url, audience: esClient.id, algorithms: ['ES256'] });
    expect(decodeProtectedHeader((await tokensOf(basic)).tokens.id_token!).alg).toBe('RS256');
    await expect(t.app.services.oidc.clients.add({ name: 'HS', redirect_uris: [REDIRECT], id_token_alg: 'HS256' })).rejects.toMatchObject({ status: 400 });
  });
});
