import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { WebClient } from '../helpers/web-client.js';

// Issue 61: a module's pages come with it. The blog's console page and navigation entry, the privacy and
// passkeys modules' account sections and the passkeys and two-factor user-page panels (their manifests'
// `web` key, rendered from their own folders) appear when the module is installed, and are gone (the 404
// page, no link, no section) when it is removed or switched off.
let t: TestApp;
beforeAll(async () => {
  // Two console posts a minute: the third shows that a module's page route counts in `admin` (the gate's
  // table is made from the page registrations, the modules' included).
  t = await startTestApp({ env: { RATE_LIMIT_ADMIN: '2/1m' } });
});
afterAll(async () => {
  await t?.close();
});

async function signedIn(user_type: string) {
  const user = await makeUser(t, { email: uniqueEmail('door'), user_type });
  const c = new WebClient(t.url);
  expect((await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(303);
  return c;
}

async function shown(admin: WebClient, user: WebClient) {
  const blog = await admin.get('/admin/blog');
  const dashboard = await admin.get('/admin');
  const account = await user.get('/account');
  expect(dashboard.status).toBe(200);
  expect(account.status).toBe(200);
  return {
    blogStatus: blog.status,
    blogPage: blog.text.includes('data-queue') || blog.text.includes('Posts waiting for review'),
    nav: dashboard.text.includes('href="/admin/blog"') && dashboard.text.includes('Blog moderation'),
    section: account.text.includes('id="your-data"') && account.text.includes('action="/account/privacy/delete"'),
    sectionLink: account.text.includes('href="#your-data"'),
  };
}

describe("a module's pages come and go with it", () => {
  it('when the blog and privacy are installed, then their console page, nav entry and account section show; removed or off, they are gone', async () => {
    const admin = await signedIn('admin');
    const user = await signedIn('customer');
    const none = { blogStatus: 404, blogPage: false, nav: false, section: false, sectionLink: false };
    expect(await shown(admin, user)).toEqual(none);
    // Not installed: the module's page path is the 404 page, as any unknown path.
    expect((await admin.get('/admin/blog')).text).toContain('<html');

    await t.app.modules.hub.install(['blog', 'privacy']);
    expect(await shown(admin, user)).toEqual({ blogStatus: 200, blogPage: true, nav: true, section: true, sectionLink: true });

    // Switched off: gone, as when not installed.
    await t.app.modules.hub.disable('blog');
    await t.app.modules.hub.disable('privacy');
    expect(await shown(admin, user)).toEqual(none);
    await t.app.modules.hub.enable('blog');
    await t.app.modules.hub.enable('privacy');
    expect((await shown(admin, user)).blogStatus).toBe(200);

    await t.app.modules.hub.uninstall('blog', { force: true, dropData: true });
    await t.app.modules.hub.uninstall('privacy', { force: true, dropData: true });
    expect(await shown(admin, user)).toEqual(none);
    // A section's post of a module that is gone does nothing the page knows of: the API's 404.
    expect((await user.request('POST', '/account/privacy/delete', { form: { confirm: 'yes' } })).status).toBe(404);
  });

  it("when passkeys and two-factor are installed, then their account section and the console user page's panels show; removed, they are gone", async () => {
    const admin = await signedIn('admin');
    const user = await signedIn('customer');
    const target = await makeUser(t, { email: uniqueEmail('door-target'), two_factor: true });
    const look = async () => {
      const account = (await user.get('/account')).text;
      const page = (await admin.get(`/admin/users/${target.id}`)).text;
      return {
        section: account.includes('id="passkey-list"') && account.includes('href="#passkey-list"'),
        panel: page.includes('id="user-passkeys"'),
        reset: page.includes('data-reset-two-factor'),
      };
    };
    expect(await look()).toEqual({ section: false, panel: false, reset: false });
    await t.app.modules.hub.install(['two-factor', 'passkeys']);
    expect(await look()).toEqual({ section: true, panel: true, reset: true });
    await t.app.modules.hub.uninstall('passkeys', { force: true, dropData: true });
    await t.app.modules.hub.uninstall('two-factor', { force: true, dropData: true });
    expect(await look()).toEqual({ section: false, panel: false, reset: false });
  });

  it("when a module's console post is sent more often than the admin class allows, then 429 (its class comes from its page registration)", async () => {
    await t.app.modules.hub.install(['blog']);
    try {
      const admin = await signedIn('admin');
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await admin.request('POST', '/admin/blog/posts/x/approve', { form: {} })).status);
      // Refused for its missing token twice (counted all the same), then the class is spent.
      expect(statuses).toEqual([403, 403, 429]);
    } finally {
      await t.app.modules.hub.uninstall('blog', { force: true, dropData: true });
    }
  });
});
