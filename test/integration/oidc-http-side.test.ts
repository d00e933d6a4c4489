import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { BACKEND } from '../helpers/backend.js';
import { authorizationRequest, createJar, signedInJar, startFront } from '../helpers/oidc-rp.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const REDIRECT = 'http://localhost:9999/cb';

/**
 * The provider's HTTP side (src/oidc/http-mount.ts): discovery built from PUBLIC_URL whatever the request
 * names, oidc-provider's auto-submitting pages allowed their one script, the logout page's promise, the
 * consent form's origin check, and the actor and source of the provider's audit events.
 */
describe(`the OpenID provider's HTTP side (${BACKEND})`, () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let t: TestApp;
  let client: { id: string; secret: string };

  beforeAll(async () => {
    front = await startFront();
    t = await startTestApp({ env: { PUBLIC_URL: front.url } });
    await front.target(Number(new URL(t.url).port));
    const c = await t.app.services.oidc.clients.add({ name: 'App', redirect_uris: [REDIRECT], first_party: true, post_logout_redirect_uris: [REDIRECT] });
    client = { id: c.client.client_id, secret: c.client_secret! };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await front?.close();
  });

  const rp = (id = client.id, secret = client.secret) =>
    oc.discovery(new URL(front.url), id, undefined, oc.ClientSecretBasic(secret), { execute: [oc.allowInsecureRequests] });

  it("discovery's endpoints are PUBLIC_URL's whatever Host or X-Forwarded-* the request names", async () => {
    for (const headers of [
      { host: 'evil.example.test' },
      { host: 'evil.example.test', 'x-forwarded-host': 'evil.example.test', 'x-forwarded-proto': 'https' },
      { forwarded: 'host=evil.example.test;proto=https' },
    ]) {
      // Straight to the instance (not the front), with the request's own Host.
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const url = new URL(`${t.url}/.well-known/openid-configuration`);
        const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers }, (r) => {
          let body = '';
          r.on('data', (c: Buffer) => (body += c.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(res.status).toBe(200);
      const d = JSON.parse(res.body) as Record<string, unknown>;
      expect(d.issuer).toBe(front.url);
      for (const k of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'end_session_endpoint'])
        expect(String(d[k]), `${k} with ${JSON.stringify(headers)}`).toMatch(new RegExp(`^${front.url}/oidc/`));
      expect(res.body).not.toContain('evil');
    }
  });

  /** The one inline script of a page, and whether the page's CSP allows exactly it. */
  const scriptAllowed = (res: Response, html: string) => {
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1];
    const csp = res.headers.get('content-security-policy') ?? '';
    const sha = script === undefined ? null : createHash('sha256').update(script).digest('base64');
    return { script, csp, allowed: sha !== null && csp.includes(`'sha256-${sha}'`) };
  };

  it('the form_post response mode answers a page whose auto-submit script its CSP allows, and no other script', async () => {
    const config = await rp();
    const { jar } = await signedInJar(t, front.url);
    const { url } = await authorizationRequest(config, REDIRECT, { scope: 'openid', response_mode: 'form_post' });
    const { res } = await jar.follow(url);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`action="${REDIRECT}"`);
    expect(html).toMatch(/name="code" value="[^"]+"/);
    const { csp, allowed } = scriptAllowed(res, html);
    expect(allowed, csp).toBe(true);
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
  });

  it("the logout confirmation reached after the Gatehouse session ended submits itself (its script allowed); a keep-session client's page promises only the app's sign-out", async () => {
    const config = await rp();
    // No provider session (a browser that signed out of Gatehouse): oidc-provider's auto-submitting form.
    const noSession = await createJar().fetch(oc.buildEndSessionUrl(config, { client_id: client.id }).toString());
    const html = await noSession.text();
    expect(html).toContain('<form method="post"');
    expect(scriptAllowed(noSession, html).allowed).toBe(true);

    const keep = await t.app.services.oidc.clients.add({ name: 'Wiki', redirect_uris: [REDIRECT], first_party: true, keep_session_on_logout: true });
    const wiki = await rp(keep.client.client_id, keep.client_secret!);
    const { jar } = await signedInJar(t, front.url);
    const { url, verifier, state } = await authorizationRequest(wiki, REDIRECT, { scope: 'openid' });
    const { final } = await jar.follow(url);
    const tokens = await oc.authorizationCodeGrant(wiki, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    const page = await jar.fetch(oc.buildEndSessionUrl(wiki, { id_token_hint: tokens.id_token! }).toString());
    const text = await page.text();
    expect(text).toContain('Sign out of Wiki? You stay signed in to');
    expect(text).not.toContain('Sign out of Wiki and');
  });

  it('the consent form refuses a post whose Origin is another site, as the hosted pages do; its own origin passes', async () => {
    const third = await t.app.services.oidc.clients.add({ name: 'Third', redirect_uris: [REDIRECT] });
    const config = await rp(third.client.client_id, third.client_secret!);
    const { user, jar } = await signedInJar(t, front.url);
    const { url } = await authorizationRequest(config, REDIRECT, { scope: 'openid' });
    const { res } = await jar.follow(url);
    const html = await res.text();
    const action = new URL(/action="([^"]+)"/.exec(html)![1], front.url).toString();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1];
    const post = (origin: string) =>
      jar.fetch(action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ csrf, decision: 'allow' }),
      });
    expect((await post('https://evil.example.test')).status).toBe(403);
    const ok = await post(front.url);
    expect(ok.status).toBe(303);
    const granted = await t.app.services.audit.list({ types: ['oidc.consent_granted'], userId: user.id } as never);
    expect(granted.events[0]).toMatchObject({ actor: { id: user.id }, ip: expect.any(String) });
  });

  it("the consent and logout pages are the hosted pages' templates: the layout and its stylesheet, a nonce policy, names escaped", async () => {
    const evil = '<img src=x onerror=alert(1)>';
    const third = await t.app.services.oidc.clients.add({ name: evil, redirect_uris: [REDIRECT], post_logout_redirect_uris: [REDIRECT] });
    const config = await rp(third.client.client_id, third.client_secret!);
    const { jar } = await signedInJar(t, front.url);
    const { url, verifier, state } = await authorizationRequest(config, REDIRECT, { scope: 'openid email' });
    const { res } = await jar.follow(url);
    const consent = await res.text();
    const layout = (html: string, r: Response) => {
      expect(html).toMatch(/<link rel="stylesheet" href="\/web\/assets\/web\.[0-9a-f]+\.css">/);
      expect(html).toContain('<main id="main"');
      expect(html).not.toContain(evil);
      const nonce = /<style nonce="([^"]+)">/.exec(html)![1];
      const csp = r.headers.get('content-security-policy')!;
      expect(csp).toContain(`style-src 'self' 'nonce-${nonce}'`);
      expect(csp).toContain(`script-src 'nonce-${nonce}'`);
      // The browser goes on to the client's URI after the post: the policy's form-action names its origin.
      expect(csp).toMatch(/form-action 'self'[^;]* http:\/\/localhost:9999/);
    };
    layout(consent, res);
    expect(consent).toContain('<strong data-client>&lt;img src=x onerror=alert(1)&gt;</strong> asks to use your');
    expect(consent).toContain('<li>your email address</li>');
    const action = new URL(/action="([^"]+)"/.exec(consent)![1], front.url).toString();
    const csrf = /name="csrf" value="([^"]+)"/.exec(consent)![1];
    const allowed = await jar.fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: front.url },
      body: new URLSearchParams({ csrf, decision: 'allow' }),
    });
    const { final } = await jar.follow(new URL(allowed.headers.get('location')!, front.url).toString());
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    const logout = await jar.fetch(oc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: REDIRECT }).toString());
    const html = await logout.text();
    layout(html, logout);
    expect(html).toContain('Sign out of &lt;img src=x onerror=alert(1)&gt; and');
    expect(html).toMatch(/<form id="op\.logoutForm" method="post" action="[^"]+\/oidc\/session\/end\/confirm" class="actions">/);
  });

  it("the provider's audit events name their actor (the client) and where the request came from", async () => {
    const config = await rp();
    const { user, jar } = await signedInJar(t, front.url);
    const { url, verifier, state } = await authorizationRequest(config, REDIRECT, { scope: 'openid' });
    const { final } = await jar.follow(url);
    await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    await expect
      .poll(async () => (await t.app.services.audit.list({ types: ['oidc.token_granted', 'oidc.authorized'], userId: user.id } as never)).events.length)
      .toBe(2);
    const { events } = await t.app.services.audit.list({ types: ['oidc.token_granted', 'oidc.authorized'], userId: user.id } as never);
    for (const e of events) {
      expect(e.actor, e.type).toEqual({ via: 'oidc_client', client_id: client.id });
      expect(e.ip, e.type).toBeTruthy();
      expect(e.request_id, e.type).toBeTruthy();
    }
  });
});
