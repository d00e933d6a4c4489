import * as OTPAuth from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awayFromStepEdge } from '../../modules/two-factor/test/helpers.js';
import { addVirtualAuthenticator, launchChromium, type guardedContext } from '../helpers/chromium.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { expectCleanPage, openPage, signInOnPage } from '../helpers/web-browser.js';

// The account page in Chromium: one browser for the file, a context per test (run in parallel), 320 px
// wide. WebAuthn wants the RP ID `localhost`, so the pages are served at http://localhost:<port>: a
// TCP pass-through on 127.0.0.1 started before the app, whose PUBLIC_URL and WEBAUTHN_* name it.
let browser: Browser;
let w: AppWithMail;
let origin: string;
let front: TcpProxy;

beforeAll(async () => {
  front = await startTcpProxy();
  origin = `http://localhost:${front.port}`;
  [browser, w] = await Promise.all([
    launchChromium(),
    startAppWithMail({
      env: {
        WEB_PAGES: 'true',
        PUBLIC_URL: origin,
        WEBAUTHN_RP_ID: 'localhost',
        WEBAUTHN_ORIGINS: origin,
        RATE_LIMIT_PASSKEYS: '100000/1m',
        RATE_LIMIT_TWO_FACTOR: '100000/1m',
      },
    }),
  ]);
  await front.target(Number(new URL(w.t.url).port));
  await w.t.app.modules.hub.install(['two-factor', 'passkeys', 'privacy']);
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
  await front?.close();
});

const PHONE = { viewport: { width: 320, height: 640 } };

/** A new user signed in at /login in a context of their own, on /account. */
async function signedIn(opts: Parameters<typeof guardedContext>[1] = PHONE, values: { name?: string } = {}) {
  const user = await makeUser(w.t, { email: uniqueEmail('wacct'), ...values });
  const { g, page } = await openPage(browser, opts);
  await signInOnPage(page, origin, user.email);
  return { user, g, page };
}

/** Submits the form holding `button` and waits for the page it leads to. */
async function press(page: Page, button: ReturnType<Page['locator']>) {
  await Promise.all([page.waitForLoadState('load'), page.waitForNavigation(), button.click()]);
}

describe.concurrent('account page', () => {
  it('edits the profile and changes the password at 320 px; the page passes axe in light and dark', async () => {
    const { user, g, page } = await signedIn(PHONE, { name: 'Before' });
    await expectCleanPage(g, page);
    await page.locator('#pf-name').fill('After');
    await page.locator('#pf-title').fill('Engineer');
    await press(page, page.getByRole('button', { name: 'Save profile' }));
    expect(page.url()).toBe(`${origin}/account?done=profile#profile`);
    expect(await page.getByRole('status').innerText()).toContain('Your profile was saved.');
    expect(await page.locator('[data-user-name]').innerText()).toBe('After');
    expect(await page.locator('#pf-title').inputValue()).toBe('Engineer');

    await page.locator('#current-password').fill(DEFAULT_PASSWORD);
    await page.locator('#new-password').fill('A-new-password-77');
    await press(page, page.getByRole('button', { name: 'Change password' }));
    expect(page.url()).toBe(`${origin}/account?done=password#password`);
    const login = await w.t.request('POST', '/auth/login', { body: { email: user.email, password: 'A-new-password-77' } });
    expect(login.status).toBe(200);
    await expectCleanPage(g, page);
    await g.close();

    const dark = await signedIn({ ...PHONE, colorScheme: 'dark' });
    await expectCleanPage(dark.g, dark.page);
    await dark.g.close();
    const desktop = await signedIn({ viewport: { width: 1280, height: 900 } });
    await expectCleanPage(desktop.g, desktop.page);
    await desktop.g.close();
  });

  it('sees another session and signs it out: its next validation is 401 and it is gone from the list', async () => {
    const { user, g, page } = await signedIn();
    const other = await w.t.request('POST', '/auth/login', {
      body: { email: user.email, password: DEFAULT_PASSWORD },
      headers: { 'user-agent': 'Other Phone 9' },
    });
    const token = other.body.session_id as string;
    expect((await w.t.request('GET', '/auth/validation', { session: token })).status).toBe(200);
    await page.reload();
    const row = page.locator('[data-session]', { hasText: 'Other Phone 9' });
    expect(await row.count()).toBe(1);
    await press(page, row.getByRole('button', { name: 'Sign out' }));
    expect(page.url()).toBe(`${origin}/account?done=session#sessions`);
    expect((await w.t.request('GET', '/auth/validation', { session: token })).status).toBe(401);
    expect(await page.locator('[data-session]', { hasText: 'Other Phone 9' }).count()).toBe(0);
    expect(await page.locator('[data-session]').count()).toBe(1);
    await expectCleanPage(g, page);
    await g.close();
  });

  it('enrols TOTP from the QR code page, which turns two-step verification on and shows the backup codes once', async () => {
    const { g, page } = await signedIn();
    await page.getByLabel('Add a method').selectOption('totp');
    await press(page, page.getByRole('button', { name: 'Add method' }));
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    expect(await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(100);
    await expectCleanPage(g, page);
    // Shown in groups of four, as people type it into an app.
    const secret = (await page.locator('[data-totp-secret]').innerText()).replace(/\s+/g, '');
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
    await awayFromStepEdge();
    await page.locator('#totp-code').fill(totp.generate());
    await press(page, page.getByRole('button', { name: 'Confirm' }));
    // The first method: the backup codes made as two-step verification turned on, on the page it renders.
    expect(page.url()).toBe(`${origin}/account/two-factor/confirm`);
    expect(await page.locator('#second-step').innerText()).toContain('Two-step verification is on.');
    expect(await page.locator('#second-step').innerText()).toContain('Authenticator app');
    const codes = await page.locator('[data-backup-codes] code').allInnerTexts();
    expect(codes).toHaveLength(10);
    for (const c of codes) expect(c).toMatch(/^[a-z0-9]{5}-[a-z0-9]{5}$/);
    await expectCleanPage(g, page);
    await press(page, page.getByRole('link', { name: 'I have saved them' }));
    expect(await page.locator('[data-backup-codes]').count()).toBe(0);
    // Backup codes are set up: the page offers new ones (with a code), not a second set.
    expect(await page.getByLabel('Add a method').locator('option[value="backup_codes"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Make new backup codes' }).count()).toBe(1);
    await g.close();
  });

  it('adds a passkey with the virtual authenticator, renames and removes it', async () => {
    const { user, g, page } = await signedIn();
    const authenticator = await addVirtualAuthenticator(page);
    await page.reload();
    const add = page.getByRole('button', { name: 'Add a passkey' });
    await expect.poll(() => add.isEnabled()).toBe(true);
    await page.locator('#pk-new-name').fill('My <i>key</i>');
    await Promise.all([page.waitForURL(`${origin}/account?done=passkey_added#passkey-list`), add.click()]);
    expect(await authenticator.credentials()).toHaveLength(1);
    const rows = page.locator('[data-passkey-list] input[name="name"]');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().inputValue()).toBe('My <i>key</i>');
    expect(await page.locator('[data-passkey-list] i').count()).toBe(0);
    await expectCleanPage(g, page);

    await rows.first().fill('Work laptop');
    await press(page, page.locator('[data-passkey-list]').getByRole('button', { name: 'Rename' }));
    expect(await page.locator('[data-passkey-list] input[name="name"]').first().inputValue()).toBe('Work laptop');
    await press(page, page.getByRole('button', { name: 'Remove Work laptop' }));
    expect(page.url()).toBe(`${origin}/account?done=passkey_removed#passkey-list`);
    expect(await page.locator('[data-passkey-list] li').count()).toBe(0);
    const events = (await w.t.app.services.audit.list({ userId: user.id, limit: 50 })).events.map((e) => e.type);
    expect(events).toEqual(expect.arrayContaining(['passkeys.added', 'passkeys.removed']));
    await authenticator.remove();
    await g.close();
  });
});
