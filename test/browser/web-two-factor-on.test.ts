import * as OTPAuth from 'otpauth';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awayFromStepEdge } from '../../modules/two-factor/test/helpers.js';
import { launchChromium } from '../helpers/chromium.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
import { expectCleanPage, openPage, sessionCookie, signInOnPage } from '../helpers/web-browser.js';

// Issue 52: two-step verification set up on /account must be on. A person signs in, adds an
// authenticator app (the code computed from the key the page shows, as the app would), is told it is
// on and shown the backup codes, signs out, and the next sign-in on /login asks for the code.
let browser: Browser;
let w: AppWithMail;

beforeAll(async () => {
  [browser, w] = await Promise.all([launchChromium(), startAppWithMail({ env: { WEB_PAGES: 'true', RATE_LIMIT_TWO_FACTOR: '100000/1m' } })]);
  await w.t.app.modules.hub.install(['two-factor']);
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
});

describe('two-step verification set up on /account', () => {
  it('turns on with the first method: the page says so and shows the backup codes; signing in again asks for the code', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('tfa-on'), name: 'Careful Person' });
    const { g, page } = await openPage(browser, { viewport: { width: 320, height: 640 } });
    await signInOnPage(page, w.t.url, user.email);
    const section = page.locator('#second-step');
    expect(await section.innerText()).toContain('Two-step verification is off.');

    // Set up the authenticator app from the key the page shows.
    // The address is for mailed or texted codes: not asked for an authenticator app.
    await page.getByLabel('Add a method').selectOption('email');
    expect(await page.locator('#tf-identifier').isVisible()).toBe(true);
    await page.getByLabel('Add a method').selectOption('totp');
    expect(await page.locator('#tf-identifier').isVisible()).toBe(false);
    await Promise.all([page.waitForURL(`${w.t.url}/account/two-factor/add`), page.getByRole('button', { name: 'Add method' }).click()]);
    // Shown in groups of four, as people type it into an app.
    const shown = await page.locator('[data-totp-secret]').innerText();
    expect(shown).toMatch(/^([A-Z2-7]{4} )+[A-Z2-7]{1,4}$/);
    const secret = shown.replace(/\s+/g, '');
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
    await awayFromStepEdge();
    await page.locator('#totp-code').fill(totp.generate());
    await Promise.all([page.waitForURL(`${w.t.url}/account/two-factor/confirm`), page.getByRole('button', { name: 'Confirm' }).click()]);

    // On, said twice (the outcome and the section), and the backup codes shown once.
    expect(await page.locator('p.note[role="status"]').innerText()).toBe('The verification method was added. Two-step verification is now on.');
    expect(await section.innerText()).toContain('Two-step verification is on.');
    expect(await section.innerText()).not.toContain('Two-step verification is off.');
    const codes = await page.locator('[data-backup-codes] code').allInnerTexts();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z0-9]{5}-[a-z0-9]{5}$/);
    await expectCleanPage(g, page);
    await Promise.all([page.waitForURL(`${w.t.url}/account#second-step`), page.getByRole('link', { name: 'I have saved them' }).click()]);
    expect(await page.locator('[data-backup-codes]').count()).toBe(0);
    expect(await section.innerText()).toContain('Two-step verification is on.');
    expect((await w.t.app.services.users.get(user.id))!.two_factor).toBeTruthy();

    // Sign out, and sign in again: the password alone is not enough now.
    await Promise.all([page.waitForURL(/\/login/), page.locator('header').getByRole('button', { name: 'Sign out' }).click()]);
    await signInOnPage(page, w.t.url, user.email, { lands: `${w.t.url}/login/two-factor` });
    await expectCleanPage(g, page);
    expect(await page.getByLabel('Authenticator app').isChecked()).toBe(true);
    const pending = await sessionCookie(g.context);
    expect((await w.t.request('GET', '/auth/validation', { session: pending })).body.success).toBe(false);
    // The confirmation used the current step's code; the next step's is accepted and is no replay.
    await awayFromStepEdge();
    await page.getByLabel('Code', { exact: true }).fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await Promise.all([page.waitForURL(`${w.t.url}/account`), page.getByRole('button', { name: 'Verify' }).click()]);

    // Signed in: the account page, the session is a full one, and it still says on.
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Your account');
    expect(await page.locator('[data-user-name]').innerText()).toBe('Careful Person');
    expect(await section.innerText()).toContain('Two-step verification is on.');
    const session = await sessionCookie(g.context);
    const me = await w.t.request('GET', '/auth/validation', { session });
    expect(me.body).toMatchObject({ success: true, user: { id: user.id }, session: { two_factor_verified: true } });
    await expectCleanPage(g, page);
    await g.close();
  });
});
