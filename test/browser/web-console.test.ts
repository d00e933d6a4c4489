import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userWithEmail2fa } from '../../modules/two-factor/test/helpers.js';
import { launchChromium } from '../helpers/chromium.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { expectCleanPage, openPage, signInOnPage } from '../helpers/web-browser.js';
import { APPS, startOAuthServers, type OAuthServers } from '../helpers/social-oauth-servers.js';

// The admin console in Chromium: one browser for the file, a context per test; nothing may leave
// 127.0.0.1, no CSP violation, no serious or critical axe finding on any console page.
let browser: Browser;
let w: AppWithMail;
let oauth: OAuthServers;

beforeAll(async () => {
  // A local stand-in for GitHub, so a user can have a linked social account for the user page.
  oauth = await startOAuthServers();
  const github = { client_id: APPS.github.clientId, client_secret: APPS.github.secret, endpoints: oauth.endpoints('github') };
  [browser, w] = await Promise.all([launchChromium(), startAppWithMail({ env: { SOCIAL_LOGIN: 'true', SOCIAL_AUTH: JSON.stringify({ github }) } })]);
  await w.t.app.modules.hub.install(['two-factor', 'blog'], { config: { blog: { comments_require_approval: true } } });
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
  await oauth?.close();
});

const open = (viewport = { width: 1200, height: 900 }) => openPage(browser, { viewport });

/** Signs in at /login and lands on the console (or `returnTo`). */
const signIn = (page: Page, email: string, returnTo = '/admin') => signInOnPage(page, w.t.url, email, { returnTo });

describe('admin console', () => {
  it("an admin finds a user among many, revokes their session (the app's next validation is 401) and resets their 2FA", async () => {
    const tag = `many${Date.now().toString(36)}`;
    for (let i = 0; i < 40; i++) await makeUser(w.t, { email: `${tag}.${i}@example.test` });
    const tfa = await userWithEmail2fa(w, { email: `${tag}.target@example.test`, name: 'Target Person' });
    const admin = await makeUser(w.t, { email: uniqueEmail('admin'), user_type: 'admin' });
    const { g, page } = await open();
    await signIn(page, admin.email);
    await expectCleanPage(g, page);

    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.waitForURL(`${w.t.url}/admin/users`);
    // Search as you type: the results change without a page load.
    await page.getByLabel(/Search users/).fill(`${tag}.target`);
    await expect.poll(() => page.locator('[data-user-link]').count(), { timeout: 5_000 }).toBe(1);
    expect(page.url()).toContain(`q=${encodeURIComponent(`${tag}.target`)}`);
    await expectCleanPage(g, page);
    await Promise.all([page.waitForURL(`${w.t.url}/admin/users/${tfa.user.id}`), page.locator('[data-user-link]').click()]);
    await expectCleanPage(g, page);

    expect((await w.t.request('GET', '/auth/validation', { session: tfa.token })).status).toBe(200);
    await Promise.all([
      page.waitForURL(/done=revoked/),
      page
        .getByRole('button', { name: /Revoke the session/ })
        .first()
        .click(),
    ]);
    expect((await w.t.request('GET', '/auth/validation', { session: tfa.token })).status).toBe(401);

    expect(await page.locator('[data-two-factor]').innerText()).toBe('on');
    await Promise.all([page.waitForURL(/done=two_factor_reset/), page.locator('[data-reset-two-factor]').click()]);
    expect(await page.locator('[data-two-factor]').innerText()).toBe('off');
    expect(await page.getByRole('status').innerText()).toMatch(/Two-factor reset/);
    await g.close();
  });

  it('an admin is refused a role change to superadmin (no form, and a forged post is 403)', async () => {
    const admin = await makeUser(w.t, { email: uniqueEmail('admin'), user_type: 'admin' });
    const target = await makeUser(w.t, { email: uniqueEmail('target') });
    const { g, page } = await open();
    await signIn(page, admin.email);
    await page.goto(`${w.t.url}/admin/users/${target.id}`);
    expect(await page.locator('select[name="user_type"]').count()).toBe(0);
    // The page's own script context posts the form it would have had, with this page's console token.
    const token = await page.locator('input[name="_csrf"]').last().inputValue();
    const status = await page.evaluate(
      `fetch('/admin/users/${target.id}/role', { method: 'POST', body: new URLSearchParams({ _csrf: '${token}', user_type: 'superadmin' }) }).then((r) => r.status)`,
    );
    expect(status).toBe(403);
    expect((await w.t.app.services.users.get(target.id)).user_type).toBe('customer');
    await g.close();
  });

  it("a script injected through a user's name does not run on the user list or the user page", async () => {
    const tag = `xss${Date.now().toString(36)}`;
    const evil = await makeUser(w.t, { email: `${tag}@example.test`, name: `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>` });
    const admin = await makeUser(w.t, { email: uniqueEmail('admin'), user_type: 'admin' });
    const { g, page } = await open({ width: 320, height: 640 });
    await signIn(page, admin.email);
    await page.goto(`${w.t.url}/admin/users?q=${tag}`);
    expect(await page.locator('[data-user-name]').first().innerText()).toContain('<script>');
    // And through the script's fragment swap.
    await page.getByLabel(/Search users/).fill(tag + '@');
    await page.waitForTimeout(600);
    await page.goto(`${w.t.url}/admin/users/${evil.id}`);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await expectCleanPage(g, page);
    await g.close();
  });

  // One test per look (24 axe scans in one test outlasted its minute on a loaded host): desktop light and dark, 320 px.
  it.each([
    [{ width: 1200, height: 900 }, 'light'],
    [{ width: 1200, height: 900 }, 'dark'],
    [{ width: 320, height: 640 }, 'light'],
  ] as const)('every console page passes axe and fits at %o (%s) for a superadmin, with nothing fetched from another host', async (viewport, colorScheme) => {
    const boss = await makeSession(w.t, { email: uniqueEmail('boss'), user_type: 'superadmin' });
    // Something in the blog's moderation queue: a comment waiting for review.
    const post = await w.t.request('POST', '/api/v1/posts', { session: boss.token, body: { title: 'A post', body: 'Text', status: 'published' } });
    const reader = await makeSession(w.t);
    const waiting = await w.t.request('POST', `/api/v1/posts/${post.body.data.id}/comments`, { session: reader.token, body: { comment_body: 'Waiting' } });
    expect(waiting.body.data.status).toBe('pending');
    const { g, page } = await openPage(browser, { viewport, colorScheme });
    await signIn(page, boss.user.email);
    for (const p of [
      '/admin',
      '/admin/users',
      `/admin/users/${boss.user.id}`,
      '/admin/audit',
      '/admin/audit?type=sign_in.*',
      '/admin/modules',
      '/admin/webhooks',
      '/admin/blog',
    ]) {
      const r = await page.goto(`${w.t.url}${p}`);
      expect(r?.status(), p).toBe(200);
      await expectCleanPage(g, page);
    }
    await g.close();
  });

  it("an admin unlinks a user's GitHub account from the user page, at 320 px", async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('linked'), is_verified: true });
    const gh = { id: `${Date.now()}`, email: user.email, verified: true, name: 'Lin Ked' };
    const linked = await w.t.request('POST', '/auth/social/github/login-api', { body: { accessToken: oauth.mint('github', gh) } });
    expect(linked.body.user?.id, JSON.stringify(linked.body)).toBe(user.id);
    const admin = await makeUser(w.t, { email: uniqueEmail('admin'), user_type: 'admin' });
    const { g, page } = await open({ width: 320, height: 640 });
    await signIn(page, admin.email, `/admin/users/${user.id}`);
    expect(await page.locator('[data-social="github"]').innerText()).toContain(user.email);
    await expectCleanPage(g, page);
    await Promise.all([page.waitForURL(/done=social_removed/), page.getByRole('button', { name: 'Remove the GitHub link' }).click()]);
    expect(await page.getByRole('status').innerText()).toMatch(/Social account unlinked/);
    expect(await page.locator('[data-social]').count()).toBe(0);
    expect(
      (await w.t.request('GET', `/auth/admin/users/${user.id}/social-accounts`, { session: (await makeSession(w.t, { user_type: 'admin' })).token })).body
        .accounts,
    ).toEqual([]);
    await expectCleanPage(g, page);
    await g.close();
  });

  it('a customer is refused the console', async () => {
    const user = await makeUser(w.t, { email: uniqueEmail('customer') });
    const { g, page } = await open();
    await signInOnPage(page, w.t.url, user.email);
    const r = await page.goto(`${w.t.url}/admin`);
    expect(r?.status()).toBe(403);
    await g.close();
  });
});
