import * as OTPAuth from 'otpauth';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addVirtualAuthenticator, guardedContext, launchChromium } from '../helpers/chromium.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { seriousA11yViolations, sessionCookie, signInOnPage } from '../helpers/web-browser.js';

// Passkey sign-in on the hosted /login page, with the passkeys module installed: the page offers browser
// autofill (autocomplete "username webauthn", conditional mediation) and a button, through the module's API.
// WebAuthn refuses IP addresses as relying parties, so the browser uses http://localhost:<port>.
let browser: Browser;
let t: TestApp;
let origin: string;

// The app's public address must be known before it starts (the relying party's origin), and the test
// app listens on a port of its own choosing: a relay on a port taken first bridges the two.
let proxy: TcpProxy;

beforeAll(async () => {
  proxy = await startTcpProxy();
  origin = `http://localhost:${proxy.port}`;
  [browser, t] = await Promise.all([
    launchChromium(),
    startTestApp({ env: { PUBLIC_URL: origin, WEBAUTHN_RP_ID: 'localhost', RATE_LIMIT_PASSKEYS: '100000/1m' } }),
  ]);
  await proxy.target(Number(new URL(t.url).port));
  await t.app.modules.hub.install(['passkeys', 'two-factor']);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await proxy?.close();
});

/** Registers a passkey from the signed-in page through the module's API, as an account page would. */
const REGISTER = `(async () => {
  const b64 = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
  const enc = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const post = (url, body) => fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
  const { options: o } = await post('/auth/passkeys/register/options', {});
  const cred = await navigator.credentials.create({ publicKey: {
    ...o,
    challenge: b64(o.challenge),
    user: { ...o.user, id: b64(o.user.id) },
    excludeCredentials: (o.excludeCredentials || []).map((c) => ({ ...c, id: b64(c.id) })),
  } });
  const r = cred.response;
  return post('/auth/passkeys/register/verify', { credential: {
    id: cred.id, rawId: enc(cred.rawId), type: cred.type, clientExtensionResults: {},
    response: { clientDataJSON: enc(r.clientDataJSON), attestationObject: enc(r.attestationObject), transports: r.getTransports() },
  } });
})()`;

describe('passkey sign-in on the hosted page', () => {
  it('registers a passkey, signs out, and is signed in again by the passkey autofill on /login', async () => {
    const user = await makeUser(t, { email: uniqueEmail('pk') });
    const g = await guardedContext(browser, { viewport: { width: 320, height: 640 } });
    const page = await g.newPage();
    const authenticator = await addVirtualAuthenticator(page);
    await page.goto(`${origin}/login`);
    const field = page.getByLabel('Email or user name');
    expect(await field.getAttribute('autocomplete')).toBe('username webauthn');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor({ state: 'visible' });
    expect(await seriousA11yViolations(page)).toEqual([]);
    await signInOnPage(page, origin, user.email, { open: false });
    const added = (await page.evaluate(REGISTER)) as { success?: boolean };
    expect(added, JSON.stringify(added)).toMatchObject({ success: true });
    expect((await authenticator.credentials()).length).toBe(1);

    // Signing out lands on /login, whose script asks for a passkey with conditional mediation (autofill):
    // the virtual authenticator answers it as a user picking the passkey from the field's suggestions.
    await page.getByRole('button', { name: 'Sign out' }).first().click();
    await page.waitForURL(`${origin}/account`);
    expect(await page.locator('[data-user-name]').innerText()).toBe(user.name ?? user.email);
    expect((await t.request('GET', '/auth/me', { session: await sessionCookie(g.context) })).body.data.user.email).toBe(user.email);
    expect(g.foreign).toEqual([]);
    expect(g.errors).toEqual([]);
    await g.close();
  });

  it('a two-factor user signs in with a password and finishes the second step with a passkey on /login/two-factor', async () => {
    const user = await makeUser(t, { email: uniqueEmail('pk2') });
    // First browser: sign in, add a passkey and turn two-step verification on (TOTP through the API).
    const g1 = await guardedContext(browser);
    const p1 = await g1.newPage();
    const a1 = await addVirtualAuthenticator(p1);
    await signInOnPage(p1, origin, user.email);
    expect(await p1.evaluate(REGISTER)).toMatchObject({ success: true });
    const session = await sessionCookie(g1.context);
    const setup = await t.request('POST', '/auth/two_factor/totp/setup', { session, body: {} });
    const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(setup.body.secret) }).generate();
    expect((await t.request('POST', '/auth/two_factor/verify', { session, body: { code, method_id: setup.body.method_id, action: 'setup' } })).status).toBe(
      200,
    );
    expect((await t.request('POST', '/auth/two_factor/toggle', { session, body: { two_factor_enabled: true } })).body.two_factor_enabled).toBe(true);
    const [held] = await a1.credentials();
    await g1.close();

    // Second browser, no authenticator yet (so /login's autofill finds nothing): the password opens a pending session.
    const g2 = await guardedContext(browser);
    const page = await g2.newPage();
    await signInOnPage(page, origin, user.email, { lands: `${origin}/login/two-factor` });
    const button = page.getByRole('button', { name: 'Use your passkey' });
    await button.waitFor({ state: 'visible' });
    expect(await seriousA11yViolations(page)).toEqual([]);
    // The same passkey, now on this device.
    const a2 = await addVirtualAuthenticator(page);
    await a2.cdp.send('WebAuthn.addCredential', { authenticatorId: a2.authenticatorId, credential: held as never });
    await button.click();
    await page.waitForURL(`${origin}/account`);
    expect((await t.request('GET', '/auth/validation', { session: await sessionCookie(g2.context) })).status).toBe(200);
    const [event] = (await t.app.services.audit.list({ userId: user.id, types: ['sign_in.succeeded'], limit: 1 })).events;
    expect(event.details).toMatchObject({ method: 'two_factor' });
    expect(g2.foreign).toEqual([]);
    expect(g2.errors).toEqual([]);
    await g2.close();
  });
});
