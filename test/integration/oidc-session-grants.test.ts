import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { BACKEND } from '../helpers/backend.js';
import { DEFAULT_PASSWORD, makeUser } from '../helpers/factories.js';
import { createJar, startFront } from '../helpers/oidc-rp.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * What the OpenID provider issued ends with the Gatehouse session it was issued in (docs/oidc.md):
 * revoking one session (the user's own API, the admin's, "sign out everywhere else") ends the codes,
 * access and refresh tokens issued in it and leaves those of the user's other sessions, even when both
 * share one grant (a remembered consent). Signing out everywhere and a password change end everything.
 */

const REDIRECT = 'http://localhost:9999/cb';
const SCOPE = 'openid offline_access profile email';

type Jar = ReturnType<typeof createJar>;

describe(`OpenID tokens end with the session they were issued in (${BACKEND})`, () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let t: TestApp;
  let firstParty: oc.Configuration;
  let thirdParty: oc.Configuration;

  beforeAll(async () => {
    front = await startFront();
    t = await startTestApp({ env: { PUBLIC_URL: front.url } });
    await front.target(Number(new URL(t.url).port));
    const rp = async (opts: { first_party: boolean; name: string }) => {
      const c = await t.app.services.oidc.clients.add({ name: opts.name, redirect_uris: [REDIRECT], first_party: opts.first_party });
      return oc.discovery(new URL(front.url), c.client.client_id, undefined, oc.ClientSecretBasic(c.client_secret!), { execute: [oc.allowInsecureRequests] });
    };
    firstParty = await rp({ name: 'Console', first_party: true });
    thirdParty = await rp({ name: 'Forum', first_party: false });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await front?.close();
  });

  /** A browser signed in as `email` through POST /auth/login: its jar, session token and the session's public id. */
  async function browser(email: string, jar: Jar = createJar()) {
    const res = await jar.fetch(`${front.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: DEFAULT_PASSWORD }),
    });
    expect(res.status).toBe(200);
    const token = jar.cookies.get('session_id')!;
    const listed = await t.request('GET', '/auth/user/me/sessions', { session: token });
    const id = (listed.body.data.sessions as { id: string; current: boolean }[]).find((s) => s.current)!.id;
    return { jar, token, id };
  }

  /**
   * Runs the code flow in the browser up to the code (consenting when asked); the code is not redeemed.
   * `prompt=consent` by default: the provider issues a refresh token for offline_access only then.
   */
  async function code(config: oc.Configuration, jar: Jar, extra: Record<string, string> = { prompt: 'consent' }) {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: SCOPE,
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...extra,
    });
    const first = await jar.follow(url.toString());
    const { res } = first;
    let { final } = first;
    if (!final.startsWith(REDIRECT) && Object.keys(extra).length) {
      // The consent page of a third-party client, asked once per user.
      const html = await res.text();
      const action = /action="([^"]+)"/.exec(html)![1];
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1];
      const allowed = await jar.fetch(new URL(action, front.url).toString(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, decision: 'allow' }),
      });
      ({ final } = await jar.follow(new URL(allowed.headers.get('location')!, front.url).toString()));
    }
    expect(final.startsWith(REDIRECT), final).toBe(true);
    return { callback: new URL(final), verifier, state };
  }

  async function tokens(config: oc.Configuration, jar: Jar) {
    const c = await code(config, jar);
    const set = await oc.authorizationCodeGrant(config, c.callback, { pkceCodeVerifier: c.verifier, expectedState: c.state });
    expect(set.refresh_token).toBeTruthy();
    return set;
  }

  const refreshes = (config: oc.Configuration, refreshToken: string) =>
    oc.refreshTokenGrant(config, refreshToken).then(
      (r) => r.refresh_token!,
      (err: { error?: string }) => `refused: ${err.error}`,
    );
  const userinfoWorks = (config: oc.Configuration, accessToken: string, sub: string) =>
    oc.fetchUserInfo(config, accessToken, sub).then(
      () => true,
      () => false,
    );

  it("when a user revokes one of their sessions over the API, then that session's refresh and access tokens are refused, the other session's keep working", async () => {
    const user = await makeUser(t);
    const laptop = await browser(user.email);
    const phone = await browser(user.email);
    const fromLaptop = await tokens(firstParty, laptop.jar);
    const fromPhone = await tokens(firstParty, phone.jar);
    expect(await userinfoWorks(firstParty, fromLaptop.access_token, user.id)).toBe(true);

    const r = await t.request('DELETE', `/auth/user/me/sessions/${laptop.id}`, { session: phone.token });
    expect(r.status).toBe(200);

    expect(await refreshes(firstParty, fromLaptop.refresh_token!)).toBe('refused: invalid_grant');
    expect(await userinfoWorks(firstParty, fromLaptop.access_token, user.id)).toBe(false);
    const rotated = await refreshes(firstParty, fromPhone.refresh_token!);
    expect(rotated).not.toMatch(/^refused/);
    expect(await refreshes(firstParty, rotated)).not.toMatch(/^refused/);
    expect(await userinfoWorks(firstParty, fromPhone.access_token, user.id)).toBe(true);
  });

  it('when two sessions share one grant (a remembered consent) and one is revoked by an admin, then only its tokens end; the consent and the other session stay', async () => {
    const admin = await makeUser(t, { user_type: 'superadmin' });
    const adminToken = (await browser(admin.email)).token;
    const user = await makeUser(t);
    const one = await browser(user.email);
    const two = await browser(user.email);
    const fromOne = await tokens(thirdParty, one.jar);
    const fromTwo = await tokens(thirdParty, two.jar);

    const r = await t.request('DELETE', `/auth/admin/users/${user.id}/sessions/${one.id}`, { session: adminToken });
    expect(r.status).toBe(200);

    expect(await refreshes(thirdParty, fromOne.refresh_token!)).toBe('refused: invalid_grant');
    expect(await refreshes(thirdParty, fromTwo.refresh_token!)).not.toMatch(/^refused/);
    const grants = await t.request('GET', '/auth/user/me/oidc/grants', { session: two.token });
    expect(grants.body.data.grants).toHaveLength(1);
    // Remembered: the other browser is not asked again.
    expect((await code(thirdParty, two.jar, {})).callback.searchParams.get('code')).toBeTruthy();
  });

  it("when a user signs out everywhere else, then every other session's tokens end and this session's keep working", async () => {
    const user = await makeUser(t);
    const here = await browser(user.email);
    const others = [await browser(user.email), await browser(user.email)];
    const mine = await tokens(firstParty, here.jar);
    const theirs = [await tokens(firstParty, others[0].jar), await tokens(thirdParty, others[1].jar)];
    const r = await t.request('POST', '/auth/user/me/sessions/revoke-others', { session: here.token });
    expect(r.body.data.revoked).toBe(2);
    expect(await refreshes(firstParty, theirs[0].refresh_token!)).toBe('refused: invalid_grant');
    expect(await refreshes(thirdParty, theirs[1].refresh_token!)).toBe('refused: invalid_grant');
    expect(await refreshes(firstParty, mine.refresh_token!)).not.toMatch(/^refused/);
  });

  it('when a code was issued in a session that is revoked before the app redeems it, then the code is refused', async () => {
    const user = await makeUser(t);
    const doomed = await browser(user.email);
    const other = await browser(user.email);
    const pending = await code(firstParty, doomed.jar);
    expect((await t.request('DELETE', `/auth/user/me/sessions/${doomed.id}`, { session: other.token })).status).toBe(200);
    await expect(
      oc.authorizationCodeGrant(firstParty, pending.callback, { pkceCodeVerifier: pending.verifier, expectedState: pending.state }),
    ).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('when the same browser signs in again without signing out, then what it is issued afterwards is the new session’s: revoking the old one leaves it', async () => {
    const user = await makeUser(t);
    const first = await browser(user.email);
    const before = await tokens(firstParty, first.jar);
    // Same jar (the provider's cookies kept), a new Gatehouse session; the old one is still alive.
    const second = await browser(user.email, first.jar);
    expect(second.id).not.toBe(first.id);
    const after = await tokens(firstParty, second.jar);
    const r = await t.request('POST', '/auth/user/me/sessions/revoke-others', { session: second.token });
    expect(r.body.data.revoked).toBe(1);
    expect(await refreshes(firstParty, before.refresh_token!)).toBe('refused: invalid_grant');
    expect(await refreshes(firstParty, after.refresh_token!)).not.toMatch(/^refused/);
  });

  it("when a user changes their password, or an admin signs them out everywhere, then every session's tokens end", async () => {
    const admin = await makeUser(t, { user_type: 'superadmin' });
    const adminToken = (await browser(admin.email)).token;
    const user = await makeUser(t);
    const a = await browser(user.email);
    const b = await browser(user.email);
    const [ta, tb] = [await tokens(firstParty, a.jar), await tokens(thirdParty, b.jar)];
    const changed = await t.request('POST', '/auth/password-change/self', {
      session: a.token,
      body: { current_password: DEFAULT_PASSWORD, new_password: 'Another-Horse-43!' },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(await refreshes(firstParty, ta.refresh_token!)).toBe('refused: invalid_grant');
    expect(await refreshes(thirdParty, tb.refresh_token!)).toBe('refused: invalid_grant');

    const other = await makeUser(t);
    const c = await browser(other.email);
    const tc = await tokens(firstParty, c.jar);
    expect((await t.request('DELETE', `/auth/admin/users/${other.id}/sessions`, { session: adminToken })).status).toBe(200);
    expect(await refreshes(firstParty, tc.refresh_token!)).toBe('refused: invalid_grant');
  });

  it('when a bound Gatehouse session signs out, then the next prune drops its link and the tokens it issued stay (signing out is not a revocation)', async () => {
    const user = await makeUser(t);
    const b = await browser(user.email);
    const issued = await tokens(firstParty, b.jar);
    const links = async () =>
      (await t.app.sequelize.query("SELECT id FROM oidc_artefacts WHERE model = 'SessionLink' AND uid = ?", {
        replacements: [b.id],
        type: 'SELECT' as never,
      })) as unknown[];
    expect(await links()).toHaveLength(1);
    expect((await t.request('POST', '/auth/logout', { session: b.token })).status).toBe(200);
    await t.app.services.oidc.prune();
    expect(await links()).toHaveLength(0);
    expect(await refreshes(firstParty, issued.refresh_token!)).not.toMatch(/^refused/);
  });
});
