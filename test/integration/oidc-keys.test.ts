import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { RSA_MODULUS_BITS } from '../../src/oidc/keys.js';
import { createSealer } from '../../src/social/crypto.js';
import { authorizationRequest, signedInJar, startProviderWithClient } from '../helpers/oidc-rp.js';

/*
 * The provider's RSA signing keys (src/oidc/keys.ts; ASVS 5.0 11.2.3): a new one has a 3,072-bit
 * modulus, at init/upgrade (ensureKeys) as at a rotation; a 2,048-bit key an older Gatehouse made goes
 * on signing until a rotation, and the ID tokens it signed still verify against the served JWKS after
 * it (the retired key stays published for its overlap).
 */

const REDIRECT = 'http://localhost:9999/cb';
const bitsOf = (n: unknown) => Buffer.from(String(n), 'base64url').length * 8;

let p: Awaited<ReturnType<typeof startProviderWithClient>>;
beforeAll(async () => {
  p = await startProviderWithClient({}, REDIRECT);
}, 60_000);
afterAll(async () => p?.close());

/** Signs a new user in through the provider and answers the ID token. */
async function idToken(): Promise<string> {
  const { jar } = await signedInJar(p.t, p.front.url);
  const config = await p.rp();
  const { url, verifier, state } = await authorizationRequest(config, REDIRECT, { scope: 'openid', prompt: 'consent' });
  const { final } = await jar.follow(url);
  const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
  return tokens.id_token!;
}

async function servedJwks(): Promise<{ kid: string; alg: string; n?: string }[]> {
  const res = await fetch(`${p.front.url}/oidc/jwks`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { keys: { kid: string; alg: string; n?: string }[] }).keys;
}

describe('RSA signing keys', () => {
  it('when keys are made (init, upgrade, first use), then the RS256 key has a 3,072-bit modulus', async () => {
    expect(RSA_MODULUS_BITS).toBe(3072);
    await p.t.app.services.oidc.ensureKeys();
    const rsa = (await p.t.app.services.oidc.keys().load()).keys.filter((k) => k.alg === 'RS256');
    expect(rsa).toHaveLength(1);
    expect(bitsOf(rsa[0].n)).toBe(3072);
  });

  it('when a 2,048-bit key signs, then after a rotation its ID tokens still verify against the served JWKS, and the new key is 3,072 bits', async () => {
    // A key an older Gatehouse made (2,048 bits), signing since an hour ago, in place of the one above.
    const { sequelize, config } = p.t.app;
    const legacy = { ...(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }) as Record<string, unknown>) };
    const kid = randomBytes(12).toString('base64url');
    const sealed = createSealer(config.cookieSecret!, 'oidc-keys').seal(JSON.stringify({ ...legacy, kid, alg: 'RS256', use: 'sig' }));
    const hourAgo = new Date(Date.now() - 3_600_000);
    await sequelize.query("DELETE FROM oidc_keys WHERE alg = 'RS256'");
    await sequelize.query('INSERT INTO oidc_keys (kid, alg, private_sealed, created_at, signs_from) VALUES (?, ?, ?, ?, ?)', {
      replacements: [kid, 'RS256', sealed, hourAgo, hourAgo],
    });

    const before = await idToken();
    expect(decodeProtectedHeader(before)).toMatchObject({ alg: 'RS256', kid });
    expect(bitsOf((await servedJwks()).find((k) => k.kid === kid)?.n)).toBe(2048);

    const { kids } = await p.t.app.services.oidc.rotateKeys(0);
    const states = await p.t.app.services.oidc.keys().list();
    expect(states.find((k) => k.kid === kid)?.state).toBe('retiring');
    // The instance looks for new keys every 10 s: then the JWKS holds both, and new tokens use the new key.
    await new Promise((r) => setTimeout(r, 10_500));
    const served = await servedJwks();
    const fresh = served.find((k) => kids.includes(k.kid) && k.alg === 'RS256');
    expect(bitsOf(fresh?.n)).toBe(3072);
    expect(served.map((k) => k.kid)).toContain(kid);

    const jwks = createRemoteJWKSet(new URL(`${p.front.url}/oidc/jwks`), { cacheMaxAge: 0, cooldownDuration: 0 });
    const old = await jwtVerify(before, jwks, { issuer: p.front.url });
    expect(old.protectedHeader.kid).toBe(kid);
    const after = await idToken();
    const now = await jwtVerify(after, jwks, { issuer: p.front.url });
    expect(now.protectedHeader.kid).toBe(fresh!.kid);
  }, 60_000);
});
