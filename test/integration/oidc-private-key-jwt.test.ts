import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey as JoseKey, type JWK } from 'jose';
import { QueryTypes } from 'sequelize';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { authorizationRequest, signedInJar, startFront } from '../helpers/oidc-rp.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const REDIRECT = 'http://localhost:9999/cb';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** A key pair: the private key signs assertions, the public JWK is registered. */
async function keyPair(alg: 'ES256' | 'RS256' | 'PS256', kid = randomUUID()) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const pub = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { alg, kid, privateKey, pub, priv: { ...(await exportJWK(privateKey)), kid, alg } };
}

/**
 * private_key_jwt (RFC 7523 §2.2, OpenID Connect Core §9): a confidential client registered with its public
 * keys proves itself with a signed assertion and has no secret; oidc-provider checks iss, sub, aud, exp and
 * the jti's single use (its ReplayDetection model, through Gatehouse's adapter). client_secret_jwt is not offered,
 * and a client using a method it was not registered for is told which one it is registered for.
 */
describe(`OpenID private_key_jwt client authentication (${BACKEND})`, () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let t: TestApp;
  let superadmin: string;
  let es: Awaited<ReturnType<typeof keyPair>>;
  let rs: Awaited<ReturnType<typeof keyPair>>;
  let keyClient: string;
  let secretClient: { id: string; secret: string };

  beforeAll(async () => {
    front = await startFront();
    t = await startTestApp({ env: { PUBLIC_URL: front.url } });
    await front.target(Number(new URL(t.url).port));
    superadmin = (await makeSession(t, { user_type: 'superadmin' })).token;
    [es, rs] = await Promise.all([keyPair('ES256'), keyPair('RS256')]);
    const created = await t.request('POST', '/auth/admin/oidc/clients', {
      session: superadmin,
      body: { name: 'Keyed', redirect_uris: [REDIRECT], first_party: true, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [es.pub, rs.pub] } },
    });
    expect(created.status).toBe(200);
    keyClient = created.body.data.client.client_id;
    expect(created.body.data.client_secret ?? null).toBeNull();
    const s = await t.app.services.oidc.clients.add({ name: 'Secret', redirect_uris: [REDIRECT], first_party: true });
    secretClient = { id: s.client.client_id, secret: s.client_secret! };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await front?.close();
  });

  const rp = (clientId: string, auth: oc.ClientAuth) => oc.discovery(new URL(front.url), clientId, undefined, auth, { execute: [oc.allowInsecureRequests] });

  /** A client assertion for `keyClient`, signed with `key`, with `claims` over the usual ones. */
  const assertion = (key: { alg: string; kid: string; privateKey: JoseKey }, claims: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const payload = { iss: keyClient, sub: keyClient, aud: `${front.url}/oidc/token`, iat: now, exp: now + 60, jti: randomUUID(), ...claims };
    return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey);
  };
  const tokenRequest = (body: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${front.url}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...body }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));
  const withAssertion = (jwt: string) => tokenRequest({ client_id: keyClient, client_assertion_type: ASSERTION_TYPE, client_assertion: jwt });

  it('discovery offers private_key_jwt with RS256, PS256 and ES256 assertions, and no client_secret_jwt', async () => {
    const d = (await (await fetch(`${front.url}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
    expect(d.token_endpoint_auth_methods_supported).toEqual(['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt']);
    expect(d.token_endpoint_auth_signing_alg_values_supported).toEqual(['RS256', 'PS256', 'ES256']);
    for (const endpoint of ['introspection', 'revocation']) {
      expect(d[`${endpoint}_endpoint_auth_methods_supported`]).toEqual(d.token_endpoint_auth_methods_supported);
      expect(d[`${endpoint}_endpoint_auth_signing_alg_values_supported`]).toEqual(['RS256', 'PS256', 'ES256']);
    }
  });

  it('a registered client has its public keys and no secret: none stored, rotate-secret refused with a 400', async () => {
    const shown = await t.request('GET', `/auth/admin/oidc/clients/${keyClient}`, { session: superadmin });
    expect(shown.body.data.client).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [es.pub, rs.pub] } });
    const [row] = await t.app.sequelize.query<{ secret_hash: string | null }>('SELECT secret_hash FROM oidc_clients WHERE client_id = ?', {
      type: QueryTypes.SELECT,
      replacements: [keyClient],
    });
    expect(row.secret_hash).toBeNull();
    const rotate = await t.request('POST', `/auth/admin/oidc/clients/${keyClient}/rotate-secret`, { session: superadmin });
    expect(rotate.status).toBe(400);
    expect(rotate.body.error).toMatch(/private_key_jwt/);
  });

  it('a client_credentials and an authorization_code token request with a signed assertion (openid-client PrivateKeyJwt) succeed', async () => {
    const cc = await oc.clientCredentialsGrant(await rp(keyClient, oc.PrivateKeyJwt({ key: es.privateKey, kid: es.kid })));
    expect(cc.access_token).toBeTruthy();
    const config = await rp(keyClient, oc.PrivateKeyJwt({ key: rs.privateKey, kid: rs.kid }));
    const { jar } = await signedInJar(t, front.url);
    const { url, verifier, state } = await authorizationRequest(config, REDIRECT, { scope: 'openid' });
    const { final } = await jar.follow(url);
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.id_token).toBeTruthy();
    expect(tokens.claims()?.aud).toBe(keyClient);
    // Introspection authenticates the client the same way.
    expect(await oc.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true, client_id: keyClient });
  });

  it('refuses with invalid_client: a replayed assertion (same jti), a wrong key, an expired assertion, a wrong audience, iss ≠ client', async () => {
    const once = await assertion(es);
    expect((await withAssertion(once)).status).toBe(200);
    const replay = await withAssertion(once);
    expect(replay).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    const stranger = await keyPair('ES256', es.kid);
    const refused = [
      await assertion(stranger),
      await assertion(es, { exp: Math.floor(Date.now() / 1000) - 120, iat: Math.floor(Date.now() / 1000) - 180 }),
      await assertion(es, { aud: 'https://elsewhere.example.test/token' }),
      await assertion(es, { iss: secretClient.id }),
    ];
    for (const jwt of refused) expect(await withAssertion(jwt)).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    // The jti of the one accepted assertion is held through the adapter (ReplayDetection, a short-lived model).
    expect((await withAssertion(await assertion(es))).status).toBe(200);
  });

  it('one assertion sent ten times at once is accepted exactly once (the jti is claimed in one step, database or Redis)', async () => {
    const jwt = await assertion(es);
    const answers = await Promise.all(Array.from({ length: 10 }, () => withAssertion(jwt)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });

  it('a key client sending a secret, and a secret client sending an assertion (client_secret_jwt), are refused and told the registered method', async () => {
    const bySecret = await tokenRequest({}, { authorization: `Basic ${Buffer.from(`${keyClient}:whatever`).toString('base64')}` });
    expect(bySecret.status).toBe(401);
    expect(bySecret.body).toMatchObject({ error: 'invalid_client' });
    expect(bySecret.body.error_description).toContain('registered to authenticate with private_key_jwt, not client_secret_basic');
    const byPost = await tokenRequest({ client_id: keyClient, client_secret: 'whatever' });
    expect(byPost.body.error_description).toContain('registered to authenticate with private_key_jwt, not client_secret_post');
    const nothing = await tokenRequest({ client_id: keyClient });
    expect(nothing.body.error_description).toContain('registered to authenticate with private_key_jwt, not none');

    // openid-client's ClientSecretJwt: an HS256 assertion keyed with the secret.
    const hs = await rp(secretClient.id, oc.ClientSecretJwt(secretClient.secret));
    const err = await oc.clientCredentialsGrant(hs).catch((e: unknown) => e as { error?: string; error_description?: string });
    expect(err).toMatchObject({ error: 'invalid_client' });
    expect(err.error_description).toContain('registered to authenticate with client_secret_basic, not client_secret_jwt (client_secret_jwt is not offered');
    // And an HS256 assertion from the key client (it has no secret to key one with).
    const hsFromKeyClient = await new SignJWT({ jti: randomUUID() })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(keyClient)
      .setSubject(keyClient)
      .setAudience(`${front.url}/oidc/token`)
      .setExpirationTime('60s')
      .sign(new TextEncoder().encode('x'.repeat(32)));
    const hsRefused = await withAssertion(hsFromKeyClient);
    expect(hsRefused).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(hsRefused.body.error_description).toContain('registered to authenticate with private_key_jwt, not client_secret_jwt');
    // A secret client's own secret still works, and post against basic is told so.
    expect((await oc.clientCredentialsGrant(await rp(secretClient.id, oc.ClientSecretBasic(secretClient.secret)))).access_token).toBeTruthy();
    const post = await tokenRequest({ client_id: secretClient.id, client_secret: secretClient.secret });
    expect(post.body.error_description).toContain('registered to authenticate with client_secret_basic, not client_secret_post');
  });

  it('refuses private key members, symmetric and weak keys, a key-less private_key_jwt client and jwks on a secret client (400, nothing written)', async () => {
    const add = (body: Record<string, unknown>) =>
      t.request('POST', '/auth/admin/oidc/clients', { session: superadmin, body: { name: 'Bad', redirect_uris: [REDIRECT], ...body } });
    const before = await t.app.services.oidc.clients.list();
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [es.priv] } }, /private key material \(d\)/],
      [{ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }, /private key material \(k\)/],
      [{ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...weak, alg: 'RS256' } as JWK] } }, /1024 bits/],
      [{ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...es.pub, x: 'AAAA' }] } }, /not a valid public key/],
      [{ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: Array.from({ length: 6 }, () => es.pub) } }, /keys/],
      [{ token_endpoint_auth_method: 'private_key_jwt' }, /needs its public keys/],
      [{ jwks: { keys: [es.pub] } }, /private_key_jwt client only/],
      [{ token_endpoint_auth_method: 'client_secret_jwt' }, /token_endpoint_auth_method/],
      [{ public: true, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [es.pub] } }, /public client/],
    ];
    for (const [body, message] of bad) {
      const r = await add(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(r.body), JSON.stringify(body)).toMatch(message);
    }
    expect(await t.app.services.oidc.clients.list()).toHaveLength(before.length);
  });

  it('update replaces the keys (the old key stops working) and moving a secret client to private_key_jwt ends its secret', async () => {
    const fresh = await keyPair('PS256');
    const r = await t.request('PATCH', `/auth/admin/oidc/clients/${keyClient}`, { session: superadmin, body: { jwks: { keys: [fresh.pub] } } });
    expect(r.status).toBe(200);
    expect((await withAssertion(await assertion(es))).status).toBe(401);
    expect((await withAssertion(await assertion(fresh))).status).toBe(200);

    const moved = await t.app.services.oidc.clients.add({ name: 'Moving', redirect_uris: [REDIRECT] });
    const id = moved.client.client_id;
    await expect(t.app.services.oidc.clients.update(id, { token_endpoint_auth_method: 'private_key_jwt' })).rejects.toMatchObject({ status: 400 });
    await t.app.services.oidc.clients.update(id, { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [fresh.pub] } });
    const [row] = await t.app.sequelize.query<{ secret_hash: string | null }>('SELECT secret_hash FROM oidc_clients WHERE client_id = ?', {
      type: QueryTypes.SELECT,
      replacements: [id],
    });
    expect(row.secret_hash).toBeNull();
    const old = await tokenRequest({}, { authorization: `Basic ${Buffer.from(`${id}:${moved.client_secret}`).toString('base64')}` });
    expect(old.status).toBe(401);
  });
});
