import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awayFromStepEdge, TF, totpNow } from '../../modules/two-factor/test/helpers.js';
import { launchChromium, type guardedContext } from '../helpers/chromium.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { expectCleanPage, openPage, sessionCookie, signInOnPage } from '../helpers/web-browser.js';
import { linkIn, mailTo } from '../integration/flows-helpers.js';

// The hosted sign-in pages in Chromium: one browser for the file, a context per test (run in parallel),
// a phone-sized 320 px viewport; nothing may leave 127.0.0.1 and no CSP violation may happen.
let browser: Browser;
let w: AppWithMail;

beforeAll(async () => {
  [browser, w] = await Promise.all([launchChromium(), startAppWithMail({ env: { WEB_PAGES: 'true' } })]);
  await w.t.app.modules.hub.install(['two-factor']);
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
});

const PHONE = { viewport: { width: 320, height: 640 } };

const open = (opts: Parameters<typeof guardedContext>[1] = PHONE) => openPage(browser, opts);

describe.concurrent('hosted sign-in pages', () => {
  it('signs in with a password at 320 px and lands on the account page', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('web'), name: 'Web Person' });
    const { g, page } = await open();
    await page.goto(`${w.t.url}/login`);
    await expectCleanPage(g, page);
    // Keyboard only: the field takes focus by tabbing past the skip link and the brand, Tab goes on to
    // the password, and Enter submits the form.
    const focused = () => page.evaluate('document.activeElement && document.activeElement.id');
    for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('email');
    await page.keyboard.type(user.email);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('password');
    await page.keyboard.type(DEFAULT_PASSWORD);
    await Promise.all([page.waitForURL(`${w.t.url}/account`), page.keyboard.press('Enter')]);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Your account');
    expect(await page.locator('[data-user-name]').innerText()).toBe('Web Person');
    await expectCleanPage(g, page);
    const cookie = (await g.context.cookies()).find((c) => c.name === 'session_id')!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    // Signed in already: /login with a return_to goes straight there.
    await page.goto(`${w.t.url}/login?return_to=${encodeURIComponent('/account?from=oidc')}`);
    expect(page.url()).toBe(`${w.t.url}/account?from=oidc`);
    await g.close();
  });

  it('signs in with a TOTP second factor and trusts the device', async () => {
    const { user, token } = await makeSession(w.t, { email: uniqueEmail('totp') });
    const s = await w.t.request('POST', `${TF}/totp/setup`, { session: token, body: {} });
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    await awayFromStepEdge();
    const setup = await w.t.request('POST', `${TF}/verify`, {
      session: token,
      body: { method_id: s.body.method_id, code: totpNow(s.body.otpauth_url), action: 'setup' },
    });
    expect(setup.status, JSON.stringify(setup.body)).toBe(200);
    expect((await w.t.request('POST', `${TF}/toggle`, { session: token, body: { two_factor_enabled: true } })).body.two_factor_enabled).toBe(true);

    const { g, page } = await open();
    await signInOnPage(page, w.t.url, user.email, { returnTo: '/account?after=2fa', lands: /\/login\/two-factor/ });
    await expectCleanPage(g, page);
    expect(await page.getByLabel('Authenticator app').isChecked()).toBe(true);
    // The setup used the current step's code; the next step's is accepted and not a replay.
    await page.getByLabel('Code', { exact: true }).fill(totpNow(s.body.otpauth_url, Date.now() + 30_000));
    await page.getByLabel(/Trust this device/).check();
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${w.t.url}/account?after=2fa`);
    const cookies = await g.context.cookies();
    expect(cookies.find((c) => c.name === 'trusted_device')?.httpOnly).toBe(true);
    const session = await sessionCookie(g.context);
    expect((await w.t.request('GET', '/auth/me', { session })).body.data.user.email).toBe(user.email);
    expect(g.errors).toEqual([]);
    await g.close();
  });

  it('resets a password from the mailed link', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('reset') });
    const { g, page } = await open();
    await page.goto(`${w.t.url}/forgot-password`);
    await expectCleanPage(g, page);
    await page.getByLabel('Email').fill(user.email);
    await Promise.all([page.waitForURL(/sent=1/), page.getByRole('button', { name: 'Send the link' }).click()]);
    const link = linkIn(await mailTo(w.smtp, user.email, /reset/i));
    expect(link.pathname).toBe('/reset-password');
    await page.goto(`${w.t.url}${link.pathname}${link.search}`);
    await expectCleanPage(g, page);
    await page.getByLabel('New password').fill('Brand-New-Pass-31');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForURL(/\/login\?done=reset/);
    expect(await page.getByRole('status').innerText()).toContain('Your password was changed');
    await signInOnPage(page, w.t.url, user.email, { password: 'Brand-New-Pass-31', open: false });
    expect(g.foreign).toEqual([]);
    await g.close();
  });

  it('refuses a forged form post that has no CSRF token', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('forged') });
    const { g, page } = await open();
    await page.goto(`${w.t.url}/login`); // the browser holds the pre-session cookie, as a victim would
    // Another page (here about:blank) posts the login form to Gatehouse without the token.
    await page.goto('about:blank');
    await page.setContent(
      `<form method="post" action="${w.t.url}/login"><input name="email" value="${user.email}"><input name="password" value="${DEFAULT_PASSWORD}"><button>go</button></form>`,
    );
    const [res] = await Promise.all([page.waitForNavigation(), page.click('button')]);
    expect(res?.status()).toBe(403);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('This form has expired');
    expect((await g.context.cookies()).some((c) => c.name === 'session_id')).toBe(false);
    await g.close();
  });

  it("does not run a script injected through a user's name", async () => {
    const name = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
    const user = await makeUser(w.t, { email: uniqueEmail('xss'), name });
    const { g, page } = await open();
    await signInOnPage(page, w.t.url, user.email);
    expect(await page.locator('[data-user-name]').innerText()).toBe(name);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('main img').count()).toBe(0);
    await expectCleanPage(g, page);
    await g.close();
  });

  it('refuses a return_to on a foreign host', async () => {
    const { g, page } = await open();
    const res = await page.goto(`${w.t.url}/login?return_to=${encodeURIComponent('https://evil.example/steal')}`);
    expect(res?.status()).toBe(400);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Return address not allowed');
    await expectCleanPage(g, page);
    await g.close();
  });

  it('passes the accessibility scan on the other pages, at 320 px in light and dark and on a desktop', async () => {
    for (const opts of [
      { ...PHONE, colorScheme: 'light' as const },
      { ...PHONE, colorScheme: 'dark' as const },
      { viewport: { width: 1280, height: 900 }, colorScheme: 'dark' as const },
    ]) {
      const { g, page } = await open(opts);
      for (const path of ['/login', '/register', '/forgot-password', '/verify-email?token=abc', '/reset-password?token=nope', '/no-such-page']) {
        await page.goto(`${w.t.url}${path}`);
        await expectCleanPage(g, page);
      }
      await g.close();
    }
  });

  it('shows the pages in Spanish for a Spanish browser', async () => {
    const { g, page } = await open({ ...PHONE, locale: 'es-ES' });
    await page.goto(`${w.t.url}/login`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Inicia sesión en Gatehouse');
    expect(await page.locator('html').getAttribute('lang')).toBe('es');
    await expectCleanPage(g, page);
    await g.close();
  });

  it('shows the account page in Spanish to a user whose lang is es, in an English browser', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('es'), lang: 'es' });
    const { g, page } = await open({ ...PHONE, locale: 'en-US' });
    await page.goto(`${w.t.url}/login`);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await signInOnPage(page, w.t.url, user.email);
    expect(await page.locator('html').getAttribute('lang')).toBe('es');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Tu cuenta');
    await expectCleanPage(g, page);
    await g.close();
  });
});
