import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { authorizationRequest, signedInJar, startFront } from '../helpers/oidc-rp.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { startReceiver, WEBHOOK_TEST_ENV, type Receiver } from '../helpers/webhook-receiver.js';

const REDIRECT = 'http://localhost:9999/cb';
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * OpenID Connect Back-Channel Logout 1.0 (src/oidc/backchannel.ts): a client that registered a
 * backchannel_logout_uri is POSTed a logout token, verifiable against the JWKS and naming the `sid` its ID
 * token carried, whenever the Gatehouse session it signed in with ends — sign-out, an admin's revocation, a
 * password change, an RP-initiated logout — through the webhook outbox (retries, address rules).
 */
describe(`back-channel logout (${BACKEND})`, () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let t: TestApp;
  let receiver: Receiver;
  let client: { id: string; secret: string };
  let plain: { id: string; secret: string };

  beforeAll(async () => {
    front = await startFront();
    receiver = await startReceiver();
    t = await startTestApp({ env: { PUBLIC_URL: front.url, ...WEBHOOK_TEST_ENV } });
    await front.target(Number(new URL(t.url).port));
    t.app.services.webhooks.startWorker();
    const c = await t.app.services.oidc.clients.add({
      name: 'Logs out',
      redirect_uris: [REDIRECT],
      post_logout_redirect_uris: [REDIRECT],
      first_party: true,
      backchannel_logout_uri: receiver.url,
    });
    client = { id: c.client.client_id, secret: c.client_secret! };
    const p = await t.app.services.oidc.clients.add({ name: 'Plain', redirect_uris: [REDIRECT], first_party: true });
    plain = { id: p.client.client_id, secret: p.client_secret! };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await front?.close();
    await receiver?.close();
  });

  const rp = (c = client) => oc.discovery(new URL(front.url), c.id, undefined, oc.ClientSecretBasic(c.secret), { execute: [oc.allowInsecureRequests] });
  const jwks = () => createRemoteJWKSet(new URL(`${front.url}/oidc/jwks`));

  /** A user signed in to the client: the browser's jar, the Gatehouse session cookie, the ID token's claims. */
  async function signedInToClient(c = client) {
    const config = await rp(c);
    const { user, jar } = await signedInJar(t, front.url);
    const { url, verifier, state } = await authorizationRequest(config, REDIRECT, { scope: 'openid' });
    const { final } = await jar.follow(url);
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    return { user, jar, config, idToken: tokens.id_token!, claims: tokens.claims()!, session: jar.cookies.get('session_id')! };
  }

  /** The logout tokens the receiver got for `sub`, verified (signature, issuer, audience, typ). */
  async function logoutTokensFor(sub: string) {
    const out = [];
    for (const r of receiver.received) {
      expect(r.headers['content-type']).toBe('application/x-www-form-urlencoded');
      // Unsigned by a webhook secret: the token is the proof.
      expect(r.headers['webhook-signature']).toBeUndefined();
      const token = new URLSearchParams(r.body).get('logout_token')!;
      if (decodeJwt(token).sub !== sub) continue;
      const { payload, protectedHeader } = await jwtVerify(token, jwks(), { issuer: front.url, audience: client.id, typ: 'logout+jwt' });
      out.push({ payload, protectedHeader });
    }
    return out;
  }

  it('an ID token of a client with a back-channel URI carries sid; discovery says back-channel logout is supported', async () => {
    const { claims } = await signedInToClient();
    expect(claims.sid).toEqual(expect.any(String));
    const config = await rp();
    expect(config.serverMetadata()).toMatchObject({ backchannel_logout_supported: true, backchannel_logout_session_supported: true });
    const other = await signedInToClient(plain);
    expect(other.claims.sid).toBeUndefined();
  });

  it("signing out (POST /auth/logout) sends the client a logout token that verifies against JWKS and names the session's sid", async () => {
    const { user, claims, session } = await signedInToClient();
    const out = await t.request('POST', '/auth/logout', { session });
    expect(out.status).toBeLessThan(300);
    await expect.poll(async () => (await logoutTokensFor(user.id)).length, { timeout: 10_000 }).toBe(1);
    const [{ payload, protectedHeader }] = await logoutTokensFor(user.id);
    expect(payload).toMatchObject({ sub: user.id, sid: claims.sid, aud: client.id, events: { [EVENT]: {} } });
    expect(payload.nonce).toBeUndefined();
    expect(payload.jti).toEqual(expect.any(String));
    expect(protectedHeader.kid).toEqual(expect.any(String));
    expect(decodeProtectedHeader(new URLSearchParams(receiver.received.at(-1)!.body).get('logout_token')!).alg).toBe('RS256');
  });

  it("an admin revoking the user's sessions, and a password change, each tell the client", async () => {
    const a = await signedInToClient();
    const admin = await makeSession(t, { user_type: 'admin' });
    const revoked = await t.request('DELETE', `/auth/admin/users/${a.user.id}/sessions`, { session: admin.token });
    expect(revoked.status, JSON.stringify(revoked.body)).toBeLessThan(300);
    await expect.poll(async () => (await logoutTokensFor(a.user.id)).map((x) => x.payload.sid), { timeout: 10_000 }).toEqual([a.claims.sid]);

    const b = await signedInToClient();
    const changed = await t.request('POST', '/auth/password-change/self', {
      session: b.session,
      body: { current_password: 'Correct-Horse-42', new_password: 'Another-Battery-77' },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBeLessThan(300);
    await expect.poll(async () => (await logoutTokensFor(b.user.id)).map((x) => x.payload.sid), { timeout: 10_000 }).toEqual([b.claims.sid]);
  });

  it('an RP-initiated logout tells the client through the outbox too, once', async () => {
    const { user, jar, config, idToken, claims } = await signedInToClient();
    const page = await jar.fetch(oc.buildEndSessionUrl(config, { id_token_hint: idToken }).toString());
    const html = await page.text();
    const action = /action="([^"]+)"/.exec(html)![1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1];
    const done = await jar.fetch(new URL(action, front.url).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: front.url },
      body: new URLSearchParams({ xsrf, logout: 'yes' }),
    });
    expect(done.status).toBe(303);
    await expect.poll(async () => (await logoutTokensFor(user.id)).map((x) => x.payload.sid), { timeout: 10_000 }).toEqual([claims.sid]);
    // The Gatehouse session ended after the provider's: its revocation found nothing left to tell.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await logoutTokensFor(user.id)).toHaveLength(1);
  });

  it('a receiver that fails is tried again with the same jti; a client without a URI, and a rolled-back revocation, tell nobody', async () => {
    receiver.setMode({ kind: 'status', status: 503 });
    const a = await signedInToClient();
    const before = receiver.received.length;
    await t.request('POST', '/auth/logout', { session: a.session });
    await expect.poll(() => receiver.received.length - before, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    receiver.setMode({ kind: 'status', status: 200 });
    // Then delivered: nothing of it is pending any more.
    const pending = async () =>
      (
        (await t.app.sequelize.query("SELECT id FROM webhook_messages WHERE type = 'oidc.backchannel_logout' AND status = 'pending'", {
          type: 'SELECT' as never,
        })) as unknown[]
      ).length;
    await expect.poll(pending, { timeout: 10_000 }).toBe(0);
    const jtis = new Set(
      (await logoutTokensFor(a.user.id)).map((x) => {
        expect(x.payload.sid).toBe(a.claims.sid);
        return x.payload.jti;
      }),
    );
    expect(jtis.size).toBe(1);

    const p = await signedInToClient(plain);
    const n = receiver.received.length;
    await t.request('POST', '/auth/logout', { session: p.session });
    const c = await signedInToClient();
    const gone = await t.app.sequelize
      .transaction(async (tx) => {
        await t.app.services.oidc.revokeAccount(c.user.id, tx);
        throw new Error('roll back');
      })
      .catch((e: Error) => e.message);
    expect(gone).toBe('roll back');
    await new Promise((r) => setTimeout(r, 2_500));
    expect(receiver.received.length).toBe(n);
    expect(await logoutTokensFor(c.user.id)).toHaveLength(0);
  });

  it("the client's URI is checked at registration, shown, changed and taken away; its outbox endpoint is not an operator's webhook", async () => {
    const bad = await t.app.services.oidc.clients
      .add({ name: 'Bad', redirect_uris: [REDIRECT], backchannel_logout_uri: 'https://app.example.com/logout#frag' })
      .catch((e: { status?: number; message: string }) => e);
    expect(bad).toMatchObject({ status: 400 });
    const ftp = await t.app.services.oidc.clients
      .add({ name: 'Bad', redirect_uris: [REDIRECT], backchannel_logout_uri: 'ftp://app.example.com/logout' })
      .catch((e: { status?: number }) => e);
    expect(ftp).toMatchObject({ status: 400 });
    expect((await t.app.services.oidc.clients.get(client.id)).backchannel_logout_uri).toBe(receiver.url);
    const off = await t.app.services.oidc.clients.update(plain.id, { backchannel_logout_uri: 'https://app.example.com/bcl' });
    expect(off.backchannel_logout_uri).toBe('https://app.example.com/bcl');
    expect((await t.app.services.oidc.clients.update(plain.id, { backchannel_logout_uri: null })).backchannel_logout_uri).toBeNull();
    expect(await t.app.services.webhooks.list()).toEqual([]);
  });
});
