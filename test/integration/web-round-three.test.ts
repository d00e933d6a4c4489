import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { WebClient } from '../helpers/web-client.js';

/** What people tripped over on the pages and the console (issue 52): a favicon, "1 user", no Retry for a delivered message. */
describe('pages and console, round three', () => {
  let t: TestApp;
  let receiver: Server;
  let receiverUrl: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { WEB_PAGES: 'true', ADMIN_CONSOLE: 'true', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
    receiver = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await new Promise((r) => receiver?.close(r));
  });

  async function signedIn(userType: 'admin' | 'superadmin') {
    const user = await makeUser(t, { email: uniqueEmail(userType), user_type: userType });
    const c = new WebClient(t.url);
    expect((await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(303);
    return Object.assign(c, { user });
  }

  it('every page links an icon, and /favicon.ico answers it: no page load asks for a missing file', async () => {
    const page = await fetch(`${t.url}/login`);
    const html = await page.text();
    const href = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)">/.exec(html)?.[1];
    expect(href).toBeTruthy();
    const icon = await fetch(`${t.url}${href}`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    const ico = await fetch(`${t.url}/favicon.ico`, { redirect: 'manual' });
    expect(ico.status).toBe(301);
    expect(ico.headers.get('location')).toBe(href);
  });

  it('a search with one match says "1 user", not "1 users"', async () => {
    const c = await signedIn('admin');
    const needle = `solo${Date.now()}`;
    await makeUser(t, { email: uniqueEmail(needle), name: needle });
    const one = await c.get(`/admin/users?q=${needle}`);
    expect(one.status).toBe(200);
    expect(one.text).toMatch(/>1 user</);
    expect(one.text).not.toContain('1 users');
  });

  it('a delivered webhook message offers no Retry; a failed one does', async () => {
    const c = await signedIn('superadmin');
    const ok = await t.app.services.webhooks.create({ url: receiverUrl, events: ['user.created'] });
    await t.app.services.webhooks.test(ok.endpoint.id);
    const delivered = await c.get(`/admin/webhooks?id=${ok.endpoint.id}`);
    expect(delivered.status).toBe(200);
    expect(delivered.text).toContain('delivered');
    expect(delivered.text).not.toMatch(/\/retry"/);
    const down = await t.app.services.webhooks.create({ url: 'http://127.0.0.1:9/hook', events: ['user.created'] });
    await t.app.services.webhooks.test(down.endpoint.id);
    const failed = await c.get(`/admin/webhooks?id=${down.endpoint.id}`);
    expect(failed.text).toMatch(/\/retry"/);
  });

  it("a superadmin's own page offers no Disable and says one's own role is not changed here, not that only a superadmin may", async () => {
    const c = await signedIn('superadmin');
    const own = await c.get(`/admin/users/${c.user.id}`);
    expect(own.status).toBe(200);
    expect(own.text).not.toContain(`/admin/users/${c.user.id}/disable`);
    expect(own.text).toContain('You cannot change your own role.');
    expect(own.text).not.toContain('Only a superadmin changes roles.');
    const other = await makeUser(t, { email: uniqueEmail('other') });
    expect((await c.get(`/admin/users/${other.id}`)).text).toContain(`/admin/users/${other.id}/disable`);
  });

  it('a session waiting for its second factor is listed as such, not like a full one', async () => {
    const c = await signedIn('admin');
    const user = await makeUser(t, { email: uniqueEmail('pending') });
    const full = await t.app.services.sessions.create(user.id, { userAgent: 'full-agent' });
    const pending = await t.app.services.sessions.create(user.id, { userAgent: 'pending-agent', status: 'pending_2fa' });
    const page = await c.get(`/admin/users/${user.id}`);
    const row = (id: string) => new RegExp(`<tr data-session="${id}">(.*?)</tr>`, 's').exec(page.text)?.[1] ?? '';
    expect(row(pending.session.id)).toContain('(waiting for the second step)');
    expect(row(full.session.id)).not.toContain('waiting');
  });

  it('the register page asks first and last name apart, and a common password is refused in one plain sentence that the hint announced', async () => {
    const form = await new WebClient(t.url).get('/register');
    expect(form.text).toContain('First name');
    expect(form.text).toContain('autocomplete="family-name"');
    expect(form.text).toContain('not one of the most common passwords');
    const email = uniqueEmail('ada');
    const weak = await new WebClient(t.url).submit('/register', '/register', { name: 'Ada', last_name: 'Lovelace', email, password: 'password123' });
    expect(weak.status).toBe(400);
    expect(weak.text.match(/too common/gi)).toHaveLength(1);
    const ok = await new WebClient(t.url).submit('/register', '/register', { name: 'Ada', last_name: 'Lovelace', email, password: DEFAULT_PASSWORD });
    expect(ok.status).toBe(303);
    const user = await t.app.repos.users.findByEmail(email);
    expect(user).toMatchObject({ name: 'Ada', last_name: 'Lovelace' });
  });

  it("/account names devices as the console does, the raw User-Agent in a title, and moments as <time> in the viewer's zone (ISO in the title)", async () => {
    const c = await signedIn('admin');
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    await t.app.services.sessions.create(c.user.id, { userAgent: ua, ip: '203.0.113.7' });
    const page = await c.get('/account');
    expect(page.status).toBe(200);
    const row = /<li data-session="[^"]+">\s*<span title="([^"]+)">([^<]+)<br>(.*?)<\/li>/s.exec(page.text.slice(page.text.indexOf(ua.slice(0, 20)) - 200));
    expect(row?.[1]).toBe(ua);
    expect(row?.[2]).toBe('Chrome on Linux');
    expect(row?.[3]).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[^"]+Z" title="[^"]+" data-local>\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
    expect(page.text).not.toMatch(/>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z</);
  });
});
