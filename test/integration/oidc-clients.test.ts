import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeSession, makeUser } from '../helpers/factories.js';
import { createJar, startFront } from '../helpers/oidc-rp.js';
import { WebClient } from '../helpers/web-client.js';

const REDIRECT = 'http://127.0.0.1:9999/cb';

describe('OIDC clients, consent and several instances', () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let a: TestApp;
  let b: TestApp;
  let superadmin: string;

  beforeAll(async () => {
    front = await startFront();
    a = await startTestApp({ env: { PUBLIC_URL: front.url, RATE_LIMIT_OIDC_CLIENT_AUTH: '3/1h' } });
    b = await startTestApp({ sharing: a });
    await front.target(Number(new URL(a.url).port));
    superadmin = (await makeSession(a, { user_type: 'superadmin' })).token;
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await front?.close();
  });

  const rp = (id: string, secret: string) =>
    oc.discovery(new URL(front.url), id, undefined, oc.ClientSecretBasic(secret), { execute: [oc.allowInsecureRequests] });
  async function jarFor(token: string) {
    const jar = createJar();
    jar.cookies.set('session_id', token);
    return jar;
  }
  async function start(config: oc.Configuration, jar: ReturnType<typeof createJar>, extra: Record<string, string> = {}) {
    const verifier = oc.randomPKCECodeVerifier();
    const url = oc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email',
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    });
    return { ...(await jar.follow(url.toString())), verifier };
  }

  it('the admin API registers, shows, updates, rotates and removes clients (superadmin only), each change audited', async () => {
    const created = await a.request('POST', '/auth/admin/oidc/clients', {
      session: superadmin,
      body: { name: 'Wiki', redirect_uris: ['https://wiki.example.test/cb'] },
    });
    expect(created.status).toBe(200);
    const id = created.body.data.client.client_id as string;
    expect(created.body.data.client_secret).toMatch(/^[\w-]{43}$/);
    const listed = await a.request('GET', '/auth/admin/oidc/clients', { session: superadmin });
    expect(listed.text).not.toContain(created.body.data.client_secret);
    expect(listed.body.data.clients.map((c: { client_id: string }) => c.client_id)).toContain(id);
    const upd = await a.request('PATCH', `/auth/admin/oidc/clients/${id}`, { session: superadmin, body: { first_party: true } });
    expect(upd.body.data.client.first_party).toBe(true);
    const rot = await a.request('POST', `/auth/admin/oidc/clients/${id}/rotate-secret`, { session: superadmin });
    expect(rot.body.data.client_secret).not.toBe(created.body.data.client_secret);
    expect((await a.request('DELETE', `/auth/admin/oidc/clients/${id}`, { session: superadmin })).status).toBe(200);
    expect((await a.request('GET', `/auth/admin/oidc/clients/${id}`, { session: superadmin })).status).toBe(404);
    const events = await a.app.services.audit.list({ types: ['oidc.*'] });
    const mine = events.events.filter((e) => e.details?.client_id === id).map((e) => e.type);
    expect(mine.sort()).toEqual(['oidc.client_created', 'oidc.client_removed', 'oidc.client_secret_rotated', 'oidc.client_updated']);
    // A customer may not.
    const customer = (await makeSession(a)).token;
    expect((await a.request('GET', '/auth/admin/oidc/clients', { session: customer })).status).toBe(403);
  });

  it('refuses redirect URIs that are not exact https (or loopback http) with a 400 and writes nothing', async () => {
    for (const uri of ['http://wiki.example.test/cb', 'https://*.example.test/cb', 'https://wiki.example.test/cb#x', 'javascript:alert(1)', 'not a url']) {
      const r = await a.request('POST', '/auth/admin/oidc/clients', { session: superadmin, body: { name: 'Bad', redirect_uris: [uri] } });
      expect(r.status, uri).toBe(400);
      expect(r.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    }
    const r = await a.request('POST', '/auth/admin/oidc/clients', {
      session: superadmin,
      body: { name: 'SPA', redirect_uris: [REDIRECT], public: true, token_endpoint_auth_method: 'client_secret_post' },
    });
    expect(r.status).toBe(400);
    expect((await a.app.services.oidc.clients.list()).some((c) => c.name === 'Bad')).toBe(false);
  });

  it('a code issued by instance A is redeemed on instance B', async () => {
    const { client, client_secret } = await a.app.services.oidc.clients.add({ name: 'Two', redirect_uris: [REDIRECT], first_party: true });
    const { user, token } = await makeSession(a);
    const config = await rp(client.client_id, client_secret!);
    await front.target(Number(new URL(a.url).port));
    const { final, verifier } = await start(config, await jarFor(token));
    expect(new URL(final).searchParams.get('code')).toBeTruthy();
    await front.target(Number(new URL(b.url).port));
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, idTokenExpected: true });
    expect(tokens.claims()!.sub).toBe(user.id);
    await front.target(Number(new URL(a.url).port));
  });

  it('a third-party client shows a consent page (CSRF-protected), remembered until the user revokes it', async () => {
    const { client, client_secret } = await a.app.services.oidc.clients.add({ name: 'Forum <b>', redirect_uris: [REDIRECT] });
    const { token } = await makeSession(a);
    const config = await rp(client.client_id, client_secret!);
    const jar = await jarFor(token);
    const first = await start(config, jar);
    expect(first.res.status).toBe(200);
    expect(first.res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(first.res.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9999;");
    const html = await first.res.text();
    expect(html).toContain('Forum &lt;b&gt;');
    const action = /action="([^"]+)"/.exec(html)![1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1];
    // A forged form (wrong token) is refused.
    const forged = await jar.fetch(new URL(action, front.url).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=nope&decision=allow',
    });
    expect(forged.status).toBe(403);
    const allowed = await jar.fetch(new URL(action, front.url).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, decision: 'allow' }),
    });
    expect(allowed.status).toBe(303);
    const done = await jar.follow(new URL(allowed.headers.get('location')!, front.url).toString());
    expect(new URL(done.final).searchParams.get('code')).toBeTruthy();

    // Remembered: a new browser of the same user goes straight through.
    const again = await start(config, await jarFor(token));
    expect(new URL(again.final).searchParams.get('code')).toBeTruthy();
    const grants = await a.request('GET', '/auth/user/me/oidc/grants', { session: token });
    expect(grants.body.data.grants.map((g: { client_id: string }) => g.client_id)).toContain(client.client_id);

    // Revoked: asked again.
    expect((await a.request('DELETE', `/auth/user/me/oidc/grants/${client.client_id}`, { session: token })).status).toBe(200);
    expect((await a.request('DELETE', `/auth/user/me/oidc/grants/${client.client_id}`, { session: token })).status).toBe(404);
    const third = await start(config, await jarFor(token));
    expect(third.res.status).toBe(200);
    expect(await third.res.text()).toContain('Allow access?');
  });

  it('the account page lists the apps a user let in (name escaped) and removes one: its grant ends and the app must ask again', async () => {
    const { client, client_secret } = await a.app.services.oidc.clients.add({ name: 'Wiki <i>', redirect_uris: [REDIRECT] });
    const { user, token } = await makeSession(a);
    const config = await rp(client.client_id, client_secret!);
    const jar = await jarFor(token);
    const first = await start(config, jar);
    const html = await first.res.text();
    const action = /action="([^"]+)"/.exec(html)![1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1];
    const allowed = await jar.fetch(new URL(action, front.url).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, decision: 'allow' }),
    });
    expect(allowed.status).toBe(303);

    const c = new WebClient(a.url);
    c.jar.set('session_id', token);
    const page = await c.get('/account');
    expect(page.text).toContain(`data-app="${client.client_id}"`);
    expect(page.text).toContain('Wiki &lt;i&gt;');
    const r = await c.submit('/account', '/account/apps/revoke', { client_id: client.client_id });
    expect(r.location).toBe('/account?done=app_revoked#apps');
    expect((await a.request('GET', '/auth/user/me/oidc/grants', { session: token })).body.data.grants).toEqual([]);
    const [event] = (await a.app.services.audit.list({ userId: user.id, types: ['oidc.consent_revoked'], limit: 1 })).events;
    expect(event.details).toMatchObject({ client_id: client.client_id });
    expect((await c.submit('/account', '/account/apps/revoke', { client_id: client.client_id })).status).toBe(404);
    const again = await start(config, await jarFor(token));
    expect(await again.res.text()).toContain('Allow access?');
  });

  it('prompt=login, max_age and a pending two-factor session send the browser to sign in', async () => {
    const { client, client_secret } = await a.app.services.oidc.clients.add({ name: 'Strict', redirect_uris: [REDIRECT], first_party: true });
    const config = await rp(client.client_id, client_secret!);
    const { token } = await makeSession(a);
    // The hosted page shows its form (200) to the signed-in browser (reauth=1), not a redirect back to the provider.
    const forced = await start(config, await jarFor(token), { prompt: 'login' });
    expect(new URL(forced.final).pathname).toBe('/login');
    expect(new URL(forced.final).searchParams.get('reauth')).toBe('1');
    expect(forced.res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const aged = await start(config, await jarFor(token), { max_age: '0' });
    expect(new URL(aged.final).pathname).toBe('/login');
    expect(aged.res.status).toBe(200);
    const user = await makeUser(a, { two_factor: true });
    const pending = await a.app.services.sessions.create(user.id, { status: 'pending_2fa' });
    // A pending session is not a sign-in: /login sends it on to its second step.
    const p = await start(config, await jarFor(pending.token));
    expect(new URL(p.final).pathname).toBe('/login/two-factor');
  });

  it('failed client authentications spend a per-client budget: then even the right secret is refused, other clients are not', async () => {
    const victim = await a.app.services.oidc.clients.add({ name: 'Victim', redirect_uris: [REDIRECT] });
    const other = await a.app.services.oidc.clients.add({ name: 'Other', redirect_uris: [REDIRECT] });
    const introspect = (id: string, secret: string) =>
      fetch(`${front.url}/oidc/token/introspection`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` },
        body: new URLSearchParams({ token: 'x' }),
      });
    expect((await introspect(victim.client.client_id, victim.client_secret!)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await introspect(victim.client.client_id, `wrong-${i}`)).status).toBe(401);
    await expect.poll(async () => (await introspect(victim.client.client_id, victim.client_secret!)).status).toBe(401);
    expect((await introspect(other.client.client_id, other.client_secret!)).status).toBe(200);
    await expect
      .poll(async () =>
        (await a.app.services.audit.list({ types: ['oidc.client_auth_failed'] })).events.some((e) => e.details?.client_id === victim.client.client_id),
      )
      .toBe(true);
  });

  it('a two-factor session signs in with acr 2fa and amr mfa', async () => {
    const { client, client_secret } = await a.app.services.oidc.clients.add({ name: 'MFA', redirect_uris: [REDIRECT], first_party: true });
    const config = await rp(client.client_id, client_secret!);
    const user = await makeUser(a, { two_factor: true });
    const pending = await a.app.services.sessions.create(user.id, { status: 'pending_2fa' });
    await a.app.services.sessions.activate(pending.session.id, user.id);
    const { final, verifier } = await start(config, await jarFor(pending.token));
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, idTokenExpected: true });
    expect(tokens.claims()!.amr).toContain('mfa');
    expect(tokens.claims()!.acr).toBe('urn:gatehouse:acr:2fa');
  });
});
