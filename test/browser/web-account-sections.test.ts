import { readFileSync } from 'node:fs';
import * as OTPAuth from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awayFromStepEdge } from '../../modules/two-factor/test/helpers.js';
import { launchChromium } from '../helpers/chromium.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { expectCleanPage, openPage, signInOnPage } from '../helpers/web-browser.js';

// Issue 52: /account puts sign-in and security first, then the profile, then the data, with an in-page
// navigation to each section shown (a module that is off has neither); and an authenticator app's
// setup started and not confirmed survives a reload (the same key), with a way to cancel it.
let browser: Browser;
let w: AppWithMail;

beforeAll(async () => {
  [browser, w] = await Promise.all([launchChromium(), startAppWithMail({ env: { WEB_PAGES: 'true', RATE_LIMIT_TWO_FACTOR: '100000/1m' } })]);
  await w.t.app.modules.hub.install(['two-factor', 'passkeys', 'privacy']);
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
});

const es = JSON.parse(readFileSync(new URL('../../templates/web/i18n/es.json', import.meta.url), 'utf8')) as Record<string, string>;

/** The page's sections (not the setup panels) in document order: id and heading; and the nav's links: target and text. */
async function layout(page: Page) {
  const sections = (await page.evaluate(
    `[...document.querySelectorAll('.account > section.panel')].filter((s) => !['totp', 'confirm-code', 'codes'].includes(s.id)).map((s) => ({ id: s.id, heading: s.querySelector('h2').textContent.trim() }))`,
  )) as { id: string; heading: string }[];
  const links = (await page.evaluate(
    `[...document.querySelectorAll('nav[aria-label] [data-account-nav] a')].map((a) => ({ target: a.getAttribute('href'), text: a.textContent.trim(), exists: Boolean(document.querySelector(a.getAttribute('href') + '.panel h2')) }))`,
  )) as { target: string; text: string; exists: boolean }[];
  return { sections, links };
}

describe('the account page', () => {
  it('shows sign-in and security first, then the profile and the data, with a navigation to each section shown; a module switched off has neither', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('order') });
    const { g, page } = await openPage(browser, { viewport: { width: 1280, height: 900 } });
    await signInOnPage(page, w.t.url, user.email);
    const { sections, links } = await layout(page);
    expect(sections.map((s) => s.id)).toEqual(['password', 'second-step', 'passkey-list', 'sessions', 'apps', 'events', 'profile', 'email', 'your-data']);
    expect(sections.findIndex((s) => s.id === 'second-step')).toBeLessThan(sections.findIndex((s) => s.id === 'profile'));
    // One link per section, in the same order, named as the section's heading, each reaching a section that exists.
    expect(links.map((l) => l.target)).toEqual(sections.map((s) => `#${s.id}`));
    expect(links.map((l) => l.text)).toEqual(sections.map((s) => s.heading));
    for (const l of links) expect(l.exists, l.target).toBe(true);
    expect(await page.getByRole('navigation', { name: 'Sections of your account' }).count()).toBe(1);
    // Following a link goes to its section (no script needed: a plain fragment link).
    await page.getByRole('navigation', { name: 'Sections of your account' }).getByRole('link', { name: 'Your data' }).click();
    await page.waitForURL(`${w.t.url}/account#your-data`);
    await expectCleanPage(g, page);

    await w.t.app.modules.hub.disable('passkeys');
    await w.t.app.modules.hub.disable('privacy');
    try {
      await page.goto(`${w.t.url}/account`);
      const off = await layout(page);
      expect(off.sections.map((s) => s.id)).toEqual(['password', 'second-step', 'sessions', 'apps', 'events', 'profile', 'email']);
      expect(off.links.map((l) => l.target)).toEqual(off.sections.map((s) => `#${s.id}`));
      for (const l of off.links) expect(l.exists, l.target).toBe(true);
    } finally {
      await w.t.app.modules.hub.enable('passkeys');
      await w.t.app.modules.hub.enable('privacy');
    }
    await g.close();

    // In Spanish at 320 px: the navigation's name and links in the page's language.
    const phone = await openPage(browser, { viewport: { width: 320, height: 640 }, locale: 'es-ES' });
    const other = await makeUser(w.t, { email: uniqueEmail('orden'), lang: 'es' });
    await phone.page.goto(`${w.t.url}/login`);
    await phone.page.locator('#email').fill(other.email);
    await phone.page.locator('#password').fill(DEFAULT_PASSWORD);
    await Promise.all([phone.page.waitForURL(`${w.t.url}/account`), phone.page.locator('button[type="submit"].primary').click()]);
    const nav = phone.page.getByRole('navigation', { name: es['account.nav'] });
    expect(await nav.getByRole('link').first().innerText()).toBe(es['account.password']);
    await expectCleanPage(phone.g, phone.page);
    await phone.g.close();
  });

  it('keeps an authenticator setup across a reload: the same key, confirmed with a code from it, turns two-step verification on', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('resume') });
    const { g, page } = await openPage(browser, { viewport: { width: 320, height: 640 } });
    await signInOnPage(page, w.t.url, user.email);
    await page.getByLabel('Add a method').selectOption('totp');
    await Promise.all([page.waitForURL(`${w.t.url}/account/two-factor/add`), page.getByRole('button', { name: 'Add method' }).click()]);
    const key = (await page.locator('[data-totp-secret]').innerText()).replace(/\s+/g, '');

    // Reloaded (the GET of /account, as a person coming back does): the panel again, with the same key.
    await page.goto(`${w.t.url}/account`);
    expect(await page.locator('#totp [data-totp-resumed]').count()).toBe(1);
    expect((await page.locator('[data-totp-secret]').innerText()).replace(/\s+/g, '')).toBe(key);
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    expect(await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(100);
    await expectCleanPage(g, page);

    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(key) });
    await awayFromStepEdge();
    await page.locator('#totp-code').fill(totp.generate());
    await Promise.all([page.waitForURL(`${w.t.url}/account/two-factor/confirm`), page.getByRole('button', { name: 'Confirm' }).click()]);
    expect(await page.locator('p.note[role="status"]').innerText()).toBe('The verification method was added. Two-step verification is now on.');
    expect(await page.locator('#second-step').innerText()).toContain('Two-step verification is on.');
    expect((await w.t.app.services.users.get(user.id))!.two_factor).toBeTruthy();
    // Confirmed: no setup panel any more.
    await page.goto(`${w.t.url}/account`);
    expect(await page.locator('#totp').count()).toBe(0);
    await g.close();
  });

  it('cancels a setup left halfway: the pending method is gone and the panel no longer shows', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('cancel') });
    const { g, page } = await openPage(browser, { viewport: { width: 320, height: 640 } });
    await signInOnPage(page, w.t.url, user.email);
    await page.getByLabel('Add a method').selectOption('totp');
    await Promise.all([page.waitForURL(`${w.t.url}/account/two-factor/add`), page.getByRole('button', { name: 'Add method' }).click()]);
    await page.goto(`${w.t.url}/account`);
    await Promise.all([
      page.waitForURL(`${w.t.url}/account?done=two_factor_cancelled#second-step`),
      page.getByRole('button', { name: 'Cancel this setup' }).click(),
    ]);
    expect(await page.getByRole('status').innerText()).toBe('The setup was cancelled.');
    expect(await page.locator('#totp').count()).toBe(0);
    const [rows] = await w.t.app.sequelize.query('SELECT id FROM two_factor_methods WHERE user_id = ?', { replacements: [user.id] });
    expect(rows).toEqual([]);
    await expectCleanPage(g, page);
    await g.close();
  });
});
