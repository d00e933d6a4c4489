import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedContext, launchChromium, type GuardedContext } from '../helpers/chromium.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { fitsWidth, seriousA11yViolations } from '../helpers/web-browser.js';
import { linkIn, mailTo } from '../integration/flows-helpers.js';

// Changing the email address from /account in Chromium, confirmed from the link in the outbox: one
// browser for the file, a context per test, 320 px wide. The pages are served at http://localhost:<port>
// (a TCP pass-through started before the app, which PUBLIC_URL names), so the mailed link opens as is.
let browser: Browser;
let w: AppWithMail;
let origin: string;
let front: TcpProxy;

beforeAll(async () => {
  front = await startTcpProxy();
  origin = `http://localhost:${front.port}`;
  [browser, w] = await Promise.all([launchChromium(), startAppWithMail({ env: { WEB_PAGES: 'true', PUBLIC_URL: origin } })]);
  await front.target(Number(new URL(w.t.url).port));
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
  await front?.close();
});

const PHONE = { viewport: { width: 320, height: 640 } };

/** Signs in at /login in a context of its own and lands on /account. */
async function signIn(g: GuardedContext, email: string): Promise<Page> {
  const page = await g.newPage();
  await page.goto(`${origin}/login`);
  await page.getByLabel('Email or user name').fill(email);
  await page.getByLabel('Password').fill(DEFAULT_PASSWORD);
  await Promise.all([page.waitForURL(`${origin}/account`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
  return page;
}

async function press(page: Page, button: ReturnType<Page['locator']>) {
  await Promise.all([page.waitForLoadState('load'), page.waitForNavigation(), button.click()]);
}

describe.concurrent('email change in the browser', () => {
  it('changes the address from /account, confirms it from the mailed link, and signs in with the new one', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('bmail'), is_verified: false });
    const g = await guardedContext(browser, PHONE);
    try {
      const page = await signIn(g, user.email);

      const section = page.locator('#email');
      expect(await section.locator('[data-current-email]').innerText()).toBe(user.email);
      expect(await section.innerText()).toContain('not verified yet');
      const to = uniqueEmail('bmail-new');
      await page.getByLabel('New email address').fill(to);
      await section.getByLabel('Current password').fill(DEFAULT_PASSWORD);
      await press(page, page.getByRole('button', { name: 'Change email' }));
      expect(page.url()).toBe(`${origin}/account?done=email_sent#email`);
      expect(await page.getByRole('status').innerText()).toContain('a confirmation link was sent');
      expect(await fitsWidth(page)).toBe(true);
      expect(await seriousA11yViolations(page)).toEqual([]);

      const link = linkIn(await mailTo(w.smtp, to, /^Confirm your new email address for Gatehouse$/, 15_000));
      expect(link.origin).toBe(origin);
      await page.goto(link.href);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Confirm your new email address');
      expect(await seriousA11yViolations(page)).toEqual([]);
      await press(page, page.getByRole('button', { name: 'Confirm new email' }));
      expect(page.url()).toBe(`${origin}/account?done=email_changed#email`);
      expect(await page.getByRole('status').innerText()).toContain('Your email address was changed.');
      expect(await page.locator('#email [data-current-email]').innerText()).toBe(to);
      expect(await page.locator('#email').innerText()).toContain('verified');
      expect(await page.locator('#email').innerText()).not.toContain('not verified');

      // The old address was told, and signing in now takes the new one.
      await mailTo(w.smtp, user.email, /^The email address of your Gatehouse account was changed$/, 15_000);
      const other = await guardedContext(browser, PHONE);
      try {
        const p2 = await signIn(other, to);
        expect(await p2.locator('#email [data-current-email]').innerText()).toBe(to);
        expect(other.foreign).toEqual([]);
      } finally {
        await other.close();
      }
      expect(g.foreign).toEqual([]);
      expect(g.errors.filter((e) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(e))).toEqual([]);
    } finally {
      await g.close();
    }
  }, 120_000);

  it('shows a wrong password on the page and sends nothing', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('bmail-wrong') });
    const g = await guardedContext(browser, PHONE);
    try {
      const page = await signIn(g, user.email);
      await page.getByLabel('New email address').fill(uniqueEmail('bmail-never'));
      await page.locator('#email').getByLabel('Current password').fill('Not-My-Password-9');
      await press(page, page.getByRole('button', { name: 'Change email' }));
      expect(await page.getByRole('alert').innerText()).toContain('Current password is incorrect');
      expect(await page.locator('#email [data-current-email]').innerText()).toBe(user.email);
    } finally {
      await g.close();
    }
  });
});
