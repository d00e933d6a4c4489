import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page, Response } from 'playwright-core';
import * as oc from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awayFromStepEdge, TF, totpNow } from '../../modules/two-factor/test/helpers.js';
import { launchChromium, type guardedContext } from '../helpers/chromium.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startFront } from '../helpers/oidc-rp.js';
import { expectCleanPage, openPage, scriptErrors, seriousA11yViolations, sessionCookie, signInOnPage } from '../helpers/web-browser.js';

// Issue 25's "done means", in Chromium: an openid-client app (a node:http server on 127.0.0.1 serving /cb)
// signs a fresh browser in through the hosted /login page (and /login/two-factor), verifies the id_token
// against the discovery document's JWKS, rotates its refresh token, and loses it when an admin revokes the
// user's sessions. One browser for the file, one context per test; nothing may leave 127.0.0.1.
let browser: Browser;
let w: AppWithMail;
let front: Awaited<ReturnType<typeof startFront>>;
let rp: Awaited<ReturnType<typeof startRp>>;
let issuer: string;
let demo: { id: string; secret: string };
let intranet: { id: string; secret: string };

const es = JSON.parse(readFileSync(new URL('../../templates/web/i18n/es.json', import.meta.url), 'utf8')) as Record<string, string>;

/**
 * The relying party: a plain node:http app with openid-client. `begin` makes an authorization URL (PKCE,
 * state) and a promise of the tokens its /cb gets for that state.
 */
async function startRp() {
  const pending = new Map<
    string,
    { config: oc.Configuration; verifier: string; done(r: oc.TokenEndpointResponse & oc.TokenEndpointResponseHelpers): void; fail(e: unknown): void }
  >();
  let base = '';
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    const flow = pending.get(url.searchParams.get('state') ?? '');
    if (url.pathname !== '/cb' || !flow) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    oc.authorizationCodeGrant(flow.config, url, { pkceCodeVerifier: flow.verifier, expectedState: url.searchParams.get('state')! })
      .then((tokens) => {
        flow.done(tokens);
        res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end('<!doctype html><html lang="en"><title>Demo</title><main><h1>Signed in</h1></main></html>');
      })
      .catch((err: unknown) => {
        flow.fail(err);
        res.writeHead(400, { 'content-type': 'text/plain' }).end('sign-in failed');
      });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  base = `http://localhost:${port}`;
  return {
    redirect: `${base}/cb`,
    async begin(config: oc.Configuration, scope = 'openid offline_access profile email', extra: Record<string, string> = {}) {
      const verifier = oc.randomPKCECodeVerifier();
      const state = oc.randomState();
      const url = oc.buildAuthorizationUrl(config, {
        redirect_uri: `${base}/cb`,
        scope,
        code_challenge: await oc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        // offline_access needs consent asked for (OpenID Connect Core 11); a first-party client skips the page.
        prompt: 'consent',
        ...extra,
      });
      const tokens = new Promise<oc.TokenEndpointResponse & oc.TokenEndpointResponseHelpers>((done, fail) =>
        pending.set(state, { config, verifier, done, fail }),
      );
      return { url: url.toString(), tokens };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

beforeAll(async () => {
  front = await startFront();
  issuer = front.url;
  [browser, w, rp] = await Promise.all([launchChromium(), startAppWithMail({ env: { WEB_PAGES: 'true', PUBLIC_URL: issuer } }), startRp()]);
  await front.target(Number(new URL(w.t.url).port));
  await w.t.app.modules.hub.install(['two-factor']);
  // Registered as `gatehouse oidc client add --name demo --redirect-uri http://localhost:<port>/cb --json` does (the CLI calls this service).
  const d = await w.t.app.services.oidc.clients.add({ name: 'demo', redirect_uris: [rp.redirect] });
  demo = { id: d.client.client_id, secret: d.client_secret! };
  const i = await w.t.app.services.oidc.clients.add({ name: 'Intranet', redirect_uris: [rp.redirect], first_party: true });
  intranet = { id: i.client.client_id, secret: i.client_secret! };
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await w?.close();
  await rp?.close();
  await front?.close();
});

const PHONE = { viewport: { width: 320, height: 640 } };
const rpConfig = (c: { id: string; secret: string }) =>
  oc.discovery(new URL(issuer), c.id, undefined, oc.ClientSecretBasic(c.secret), { execute: [oc.allowInsecureRequests] });

const open = (opts: Parameters<typeof guardedContext>[1] = PHONE) => openPage(browser, opts);

/** The hosted sign-in form, asked for by an authorization request waiting on its interaction. */
const SIGN_IN_FORM = /\/login\?return_to=%2Foidc%2Finteraction%2F/;

/**
 * Opens an authorization URL and expects the hosted sign-in form at its end (returns that page's answer).
 * When it ends elsewhere, the failure names each answer on the way and the start of the last one's body, not only a timeout.
 */
async function authorize(page: Page, url: string): Promise<Response> {
  const chain: string[] = [];
  const seen = (r: Response) => chain.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  page.on('response', seen);
  try {
    const last = await page.goto(url).catch((err: Error) => {
      throw new Error(`${err.message}\nanswers so far:\n${chain.join('\n')}`);
    });
    await page.waitForURL(SIGN_IN_FORM, { timeout: 10_000 }).catch(() => undefined);
    if (!SIGN_IN_FORM.test(page.url())) {
      const body = (await last?.text().catch(() => '')) ?? '';
      throw new Error(`the authorization request ended at ${page.url()}, not the sign-in form\n${chain.join('\n')}\n${body.slice(0, 600)}`);
    }
    if (!last) throw new Error('the authorization request had no answer');
    return last;
  } finally {
    page.off('response', seen);
  }
}

async function signIn(page: Page, email: string, labels = { id: 'Email or user name', password: 'Password', submit: 'Sign in' }) {
  await page.waitForURL(SIGN_IN_FORM);
  await page.getByLabel(labels.id).fill(email);
  await page.getByLabel(labels.password).fill(DEFAULT_PASSWORD);
  await page.getByRole('button', { name: labels.submit }).click();
}

/** The id_token verified against the keys the discovery document names. */
async function verifiedIdToken(idToken: string, audience: string) {
  const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string; issuer: string };
  expect(discovery.issuer).toBe(issuer);
  return (await jwtVerify(idToken, createRemoteJWKSet(new URL(discovery.jwks_uri)), { issuer, audience })).payload;
}

describe.concurrent('OpenID Connect sign-in through the hosted pages', () => {
  it('a fresh browser signs in through /login and the consent page; sub verifies against JWKS; refresh rotates; revoking sessions ends it', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('oidc-web'), name: 'Grace' });
    const config = await rpConfig(demo);
    const flow = await rp.begin(config);
    const { g, page } = await open();
    await authorize(page, flow.url);
    await signIn(page, user.email);
    // demo is not first-party: the consent page, once.
    await page.getByRole('heading', { level: 1, name: 'Allow access?' }).waitFor();
    expect(page.url()).toMatch(/\/oidc\/interaction\/[\w-]+$/);
    expect(await page.locator('main').innerText()).toContain('demo');
    expect(await page.locator('main li').allInnerTexts()).toEqual(expect.arrayContaining(['your email address']));
    await expectCleanPage(g, page);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(new RegExp(`^${rp.redirect}\\?`));
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Signed in');

    const tokens = await flow.tokens;
    const claims = await verifiedIdToken(tokens.id_token!, demo.id);
    expect(claims.sub).toBe(user.id);
    expect(claims.amr).toEqual(['pwd']);
    expect(claims.acr).toBe('urn:gatehouse:acr:1fa');
    // The refresh token rotates.
    const r1 = await oc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(r1.refresh_token).toBeTruthy();
    expect(r1.refresh_token).not.toBe(tokens.refresh_token);
    // An admin revokes the user's sessions, as the console does: the next refresh fails.
    const admin = await makeSession(w.t, { user_type: 'superadmin' });
    const revoked = await w.t.request('DELETE', `/auth/admin/users/${user.id}/sessions`, { session: admin.token });
    expect(revoked.status, revoked.text).toBe(200);
    await expect(oc.refreshTokenGrant(config, r1.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });

    expect(g.foreign).toEqual([]);
    expect(scriptErrors(g)).toEqual([]);
    await g.close();
  });

  it('a two-factor user goes through /login/two-factor and the id_token says mfa', async () => {
    const { user, token } = await makeSession(w.t, { email: uniqueEmail('oidc-2fa') });
    const s = await w.t.request('POST', `${TF}/totp/setup`, { session: token, body: {} });
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    await awayFromStepEdge();
    const setup = await w.t.request('POST', `${TF}/verify`, {
      session: token,
      body: { method_id: s.body.method_id, code: totpNow(s.body.otpauth_url), action: 'setup' },
    });
    expect(setup.status, JSON.stringify(setup.body)).toBe(200);
    expect((await w.t.request('POST', `${TF}/toggle`, { session: token, body: { two_factor_enabled: true } })).body.two_factor_enabled).toBe(true);

    const config = await rpConfig(intranet);
    const flow = await rp.begin(config, 'openid profile');
    const { g, page } = await open();
    await authorize(page, flow.url);
    await signIn(page, user.email);
    await page.waitForURL(/\/login\/two-factor/);
    // The setup used the current step's code; the next step's is accepted and not a replay.
    await page.getByLabel('Code', { exact: true }).fill(totpNow(s.body.otpauth_url, Date.now() + 30_000));
    await page.getByRole('button', { name: 'Verify' }).click();
    // Intranet is first-party: no consent page, straight back to the app.
    await page.waitForURL(new RegExp(`^${rp.redirect}\\?`));
    const tokens = await flow.tokens;
    const claims = await verifiedIdToken(tokens.id_token!, intranet.id);
    expect(claims.sub).toBe(user.id);
    expect(claims.amr).toEqual(expect.arrayContaining(['pwd', 'otp', 'mfa']));
    expect(claims.acr).toBe('urn:gatehouse:acr:2fa');
    expect(g.foreign).toEqual([]);
    expect(scriptErrors(g)).toEqual([]);
    await g.close();
  });

  it('shows the consent page in Spanish, and Deny sends the app an access_denied', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('oidc-es') });
    const config = await rpConfig(demo);
    const flow = await rp.begin(config, 'openid email');
    flow.tokens.catch(() => undefined);
    const { g, page } = await open({ ...PHONE, locale: 'es-ES', colorScheme: 'dark' });
    await authorize(page, flow.url);
    await signIn(page, user.email, { id: es['login.identifier'], password: es['login.password'], submit: es['login.submit'] });
    await page.getByRole('heading', { level: 1, name: es['oidc.consent.title'] }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('es');
    expect(await page.locator('main li').allInnerTexts()).toEqual([es['oidc.consent.scope.openid'], es['oidc.consent.scope.email']]);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByRole('button', { name: es['oidc.consent.deny'] }).click();
    await page.waitForURL(new RegExp(`^${rp.redirect}\\?`));
    const back = new URL(page.url());
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
    expect(g.foreign).toEqual([]);
    expect(scriptErrors(g)).toEqual([]);
    await g.close();
  });

  it('prompt=login asks a signed-in browser for its password again; the form then ends at the first-party app', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('oidc-reauth') });
    const { g, page } = await open();
    await signInOnPage(page, issuer, user.email);
    const before = await sessionCookie(g.context);

    const config = await rpConfig(intranet);
    const flow = await rp.begin(config, 'openid', { prompt: 'login' });
    // The form, not a redirect loop; its CSP lets the post's redirects end at the app's origin, and no other.
    const shown = await authorize(page, flow.url);
    expect(new URL(shown.url()).pathname).toBe('/login');
    const csp = shown.headers()['content-security-policy'];
    expect(csp).toContain(`form-action 'self' ${new URL(rp.redirect).origin}`);
    expect(csp).not.toContain('*');
    expect(new URL(page.url()).searchParams.get('reauth')).toBe('1');
    await signIn(page, user.email);
    await page.waitForURL(new RegExp(`^${rp.redirect}\\?`));
    const claims = await verifiedIdToken((await flow.tokens).id_token!, intranet.id);
    expect(claims.sub).toBe(user.id);
    const after = await sessionCookie(g.context);
    expect(after).not.toBe(before);
    expect(g.foreign).toEqual([]);
    expect(scriptErrors(g)).toEqual([]);
    await g.close();
  });
});
