import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { BACKEND } from '../helpers/backend.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { authorizationRequest, signedInJar, startFront } from '../helpers/oidc-rp.js';

const REDIRECT = 'http://localhost:9999/cb';
const AT_ONCE = 20;

/**
 * RFC 6749 §4.1.2 and RFC 9700: an authorization code is used once, and a refresh token that was
 * rotated out is used once; a second use revokes what the first issued. "Once" means once when the
 * requests arrive together, on one instance or on two sharing the database (and Redis, where the
 * codes live on the pg tier): docs/oidc.md promises it, and these tests hold it to that.
 */
describe(`OpenID codes and refresh tokens are single use under concurrency, across two instances (${BACKEND})`, () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let a: TestApp;
  let b: TestApp;
  let client: { id: string; secret: string };

  beforeAll(async () => {
    front = await startFront();
    a = await startTestApp({ env: { PUBLIC_URL: front.url } });
    b = await startTestApp({ sharing: a });
    await front.target(Number(new URL(a.url).port));
    const c = await a.app.services.oidc.clients.add({ name: 'Race', redirect_uris: [REDIRECT], first_party: true });
    client = { id: c.client.client_id, secret: c.client_secret! };
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await front?.close();
  });

  const basic = () => `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
  /** A token request straight to one instance (the i-th of the race alternates between them). */
  const tokenRequest = (i: number, params: Record<string, string>) =>
    fetch(`${(i % 2 ? b : a).url}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic() },
      body: new URLSearchParams(params),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, string> }));

  /** A fresh code for a new signed-in user, through the front (instance A). */
  async function freshCode() {
    const config = await oc.discovery(new URL(front.url), client.id, undefined, oc.ClientSecretBasic(client.secret), { execute: [oc.allowInsecureRequests] });
    const { user, jar } = await signedInJar(a, front.url);
    const { url, verifier } = await authorizationRequest(config, REDIRECT, { scope: 'openid offline_access', prompt: 'consent' });
    const { final } = await jar.follow(url);
    const code = new URL(final).searchParams.get('code');
    if (!code) throw new Error(`no code: ${final}`);
    return { user, code, verifier };
  }

  const userinfo = (i: number, accessToken: string) =>
    fetch(`${(i % 2 ? b : a).url}/oidc/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } }).then((r) => r.status);

  it(`when ${AT_ONCE} token requests redeem one code at once on two instances, exactly one gets tokens, and those are revoked (five rounds)`, async () => {
    for (let round = 0; round < 5; round++) {
      const { code, verifier } = await freshCode();
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, (_, i) => tokenRequest(i, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier })),
      );
      const won = answers.filter((r) => r.status === 200);
      expect(won, `round ${round}: ${JSON.stringify(answers.map((r) => r.status))}`).toHaveLength(1);
      for (const lost of answers.filter((r) => r.status !== 200)) {
        expect(lost.status).toBe(400);
        expect(lost.body.error).toBe('invalid_grant');
      }
      // The code was replayed: what it issued is revoked on both instances (RFC 6749 §4.1.2).
      const tokens = won[0].body;
      expect(await userinfo(0, tokens.access_token)).toBe(401);
      expect(await userinfo(1, tokens.access_token)).toBe(401);
      const refresh = await tokenRequest(round, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      expect(refresh.body.error).toBe('invalid_grant');
    }
  });

  it('a code redeemed once, alone, still works: its tokens stay valid', async () => {
    const { user, code, verifier } = await freshCode();
    const r = await tokenRequest(1, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await userinfo(0, r.body.access_token)).toBe(200);
    const refreshed = await tokenRequest(0, { grant_type: 'refresh_token', refresh_token: r.body.refresh_token });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(await userinfo(1, refreshed.body.access_token)).toBe(200);
    expect(user.id).toBeTruthy();
  });

  it(`when ${AT_ONCE} refreshes use one refresh token at once on two instances, exactly one succeeds, reuse is detected and the winner's new tokens are revoked too`, async () => {
    for (let round = 0; round < 3; round++) {
      const { user, code, verifier } = await freshCode();
      const first = await tokenRequest(0, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
      expect(first.status).toBe(200);
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, (_, i) => tokenRequest(i, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token })),
      );
      const won = answers.filter((r) => r.status === 200);
      expect(won, `round ${round}: ${JSON.stringify(answers.map((r) => r.status))}`).toHaveLength(1);
      for (const lost of answers.filter((r) => r.status !== 200)) expect(lost.body.error).toBe('invalid_grant');
      // The grant went with the reuse: the winner's rotated refresh token and access token, and the first access token.
      const next = won[0].body;
      expect((await tokenRequest(round, { grant_type: 'refresh_token', refresh_token: next.refresh_token })).body.error).toBe('invalid_grant');
      expect(await userinfo(0, next.access_token)).toBe(401);
      expect(await userinfo(1, first.body.access_token)).toBe(401);
      await expect
        .poll(async () => (await a.app.services.audit.list({ types: ['oidc.refresh_reuse_detected'], userId: user.id } as never)).events.length)
        .toBeGreaterThan(0);
    }
  });
});
