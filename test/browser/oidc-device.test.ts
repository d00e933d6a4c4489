import type { Browser } from 'playwright-core';
import * as oc from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startFront } from '../helpers/oidc-rp.js';
import { expectCleanPage, openPage, scriptErrors } from '../helpers/web-browser.js';

// Issue 60's "a device-code sign-in completes through /device in headless Chromium": an openid-client device
// (a public client registered with the device grant) starts the flow and polls; a signed-out browser opens its
// verification_uri_complete, signs in on the hosted /login page, confirms on /device, and the device's polling
// gets an ID token for that user, verified against the discovery document's JWKS. Nothing leaves 127.0.0.1.
let browser: Browser;
let w: AppWithMail;
let front: Awaited<ReturnType<typeof startFront>>;
let issuer: string;
let tv: string;

beforeAll(async () => {
  front = await startFront();
  issuer = front.url;
  [browser, w] = await Promise.all([launchChromium(), startAppWithMail({ env: { WEB_PAGES: 'true', PUBLIC_URL: issuer } })]);
  await front.target(Number(new URL(w.t.url).port));
  // As `gatehouse oidc client add --name "Living-room TV" --public --grant device_code --redirect-uri …` registers it.
  const c = await w.t.app.services.oidc.clients.add({ name: 'Living-room TV', redirect_uris: ['http://localhost/cb'], public: true, device_flow: true });
  tv = c.client.client_id;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await w?.close();
  await front?.close();
});

describe('the device authorization grant in a browser', () => {
  it('a signed-out user opens verification_uri_complete, signs in, confirms on /device, and the polling device gets their ID token', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('device'), name: 'Ada' });
    const config = await oc.discovery(new URL(issuer), tv, undefined, oc.None(), { execute: [oc.allowInsecureRequests] });
    const device = await oc.initiateDeviceAuthorization(config, { scope: 'openid profile email' });
    expect(device.verification_uri).toBe(`${issuer}/device`);
    const polling = oc.pollDeviceAuthorizationGrant(config, device);

    const { g, page } = await openPage(browser, { viewport: { width: 320, height: 640 } });
    await page.goto(device.verification_uri_complete!);
    // Signed out: the hosted sign-in, which comes back to the code.
    await page.waitForURL(/\/login\?return_to=%2Fdevice%3Fuser_code%3D/);
    await page.getByLabel('Email or user name').fill(user.email);
    await page.getByLabel('Password').fill(DEFAULT_PASSWORD);
    await Promise.all([page.waitForURL(/\/device\?user_code=/), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    expect(await page.getByLabel('Code').inputValue()).toBe(device.user_code);
    await expectCleanPage(g, page);
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.getByRole('heading', { level: 1, name: 'Allow this device?' }).waitFor();
    const main = await page.locator('main').innerText();
    expect(main).toContain('Living-room TV');
    expect(main).toContain(device.user_code);
    expect(await page.locator('main li').allInnerTexts()).toEqual(expect.arrayContaining(['your email address']));
    await expectCleanPage(g, page);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { level: 1, name: 'Device connected' }).waitFor();
    await expectCleanPage(g, page);

    const tokens = await polling;
    const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
    const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(discovery.jwks_uri)), { issuer, audience: tv });
    expect(payload.sub).toBe(user.id);
    expect(payload.amr).toEqual(['pwd']);
    // The profile and email scopes the user allowed come from userinfo (the ID token carries only sub and how).
    expect((await oc.fetchUserInfo(config, tokens.access_token, user.id)).email).toBe(user.email);

    expect(g.foreign).toEqual([]);
    expect(scriptErrors(g)).toEqual([]);
    await g.close();
  });
});
