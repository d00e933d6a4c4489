import { describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail, useWorld, userWithEmail2fa } from '../../modules/two-factor/test/helpers.js';
import { startTestApp } from '../helpers/test-app.js';
import { csrfIn, WebClient } from '../helpers/web-client.js';

// The admin console over plain HTTP (no browser): roles, the Strict CSRF binding, each action through
// the API's services with the admin as the audit actor. The two-factor module is installed (useWorld).
const world = useWorld();

async function staff(userType: 'admin' | 'superadmin' | 'customer') {
  const { t } = world();
  const user = await makeUser(t, { email: uniqueEmail(userType), user_type: userType });
  const c = new WebClient(t.url);
  const r = await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD });
  expect(r.status).toBe(303);
  return { c, user };
}

/** The console forms' token on a page (the header's sign-out form carries the hosted pages' one). */
function consoleCsrf(html: string): string {
  const all = [...html.matchAll(/name="_csrf" value="([^"]+)"/g)].map((m) => m[1]);
  if (all.length < 2) throw new Error('no console form on the page');
  return all[all.length - 1];
}

/** Posts a console form with the token of the page it is on. */
async function press(c: WebClient, page: string, action: string, form: Record<string, string> = {}) {
  const p = await c.get(page);
  return c.request('POST', action, { form: { _csrf: consoleCsrf(p.text), ...form } });
}

async function lastEvent(type: string, userId: string) {
  const page = await world().t.app.services.audit.list({ types: [type], userId, limit: 1 });
  return page.events[0];
}

describe('who may open the console', () => {
  it('when nobody is signed in, then /admin sends the browser to the sign-in page with return_to', async () => {
    const r = await new WebClient(world().t.url).get('/admin/users?q=x');
    expect(r.status).toBe(303);
    expect(r.location).toBe(`/login?return_to=${encodeURIComponent('/admin/users?q=x')}`);
  });

  it('when a customer opens a console page or posts a console form, then 403 and nothing changes', async () => {
    const { c } = await staff('customer');
    const target = await makeUser(world().t, { email: uniqueEmail('target') });
    for (const p of ['/admin', '/admin/users', `/admin/users/${target.id}`, '/admin/audit', '/admin/modules']) expect((await c.get(p)).status, p).toBe(403);
    // A customer has no console page to take a token from: the pages' token does not pass either.
    const page = await c.get('/account');
    const r = await c.request('POST', `/admin/users/${target.id}/disable`, { form: { _csrf: csrfIn(page.text) } });
    expect(r.status).toBe(403);
    expect((await world().t.app.services.users.get(target.id)).disabled_at).toBeNull();
  });

  it('when an admin opens each console page, then 200 with a CSP nonce and the Strict console cookie', async () => {
    const { c } = await staff('admin');
    const target = await makeUser(world().t, { email: uniqueEmail('target') });
    for (const p of ['/admin', '/admin/users', `/admin/users/${target.id}`, '/admin/audit', '/admin/modules']) {
      const r = await c.get(p);
      expect(r.status, p).toBe(200);
      expect(r.headers.get('content-security-policy')).toMatch(/script-src 'nonce-/);
      expect(r.text).not.toMatch(/\son[a-z]+=|style="/i);
    }
    expect(c.setCookies.find((l) => l.startsWith('gh_console='))).toMatch(/HttpOnly/i);
    expect(c.setCookies.find((l) => l.startsWith('gh_console='))).toMatch(/SameSite=Strict/i);
    // Webhooks are superadmin-only, as GET /auth/admin/webhooks.
    expect((await c.get('/admin/webhooks')).status).toBe(403);
  });

  it('when ADMIN_CONSOLE=false, then /admin is the 404 page', async () => {
    const t = await startTestApp({ env: { ADMIN_CONSOLE: 'false' } });
    try {
      const admin = await makeUser(t, { email: uniqueEmail('admin'), user_type: 'admin' });
      const c = new WebClient(t.url);
      await c.submit('/login', '/login', { email: admin.email, password: DEFAULT_PASSWORD });
      expect((await c.get('/admin')).status).toBe(404);
      expect((await c.get('/admin/users')).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});

describe('CSRF on console posts', () => {
  it('when a console post has no token, the pages token (Lax cookie) or lacks the Strict cookie, then 403 and nothing changes', async () => {
    const { c } = await staff('admin');
    const target = await makeUser(world().t, { email: uniqueEmail('target') });
    const page = await c.get(`/admin/users/${target.id}`);
    const token = consoleCsrf(page.text);
    // The header's sign-out form (a hosted page's post) carries the pages' token, not this one.
    expect(csrfIn(page.text)).not.toBe(token);
    expect((await c.request('POST', `/admin/users/${target.id}/disable`, { form: {} })).status).toBe(403);
    // The hosted pages' token (bound to the Lax cookie) is not a console token.
    const login = await new WebClient(world().t.url).get('/login');
    expect((await c.request('POST', `/admin/users/${target.id}/disable`, { form: { _csrf: csrfIn(login.text) } })).status).toBe(403);
    // A cross-site post arrives without the Strict cookie: the token alone does not pass.
    const strict = c.jar.get('gh_console')!;
    c.jar.delete('gh_console');
    expect((await c.request('POST', `/admin/users/${target.id}/disable`, { form: { _csrf: token } })).status).toBe(403);
    c.jar.set('gh_console', strict);
    expect((await world().t.app.services.users.get(target.id)).disabled_at).toBeNull();
    // From another origin, even with both: refused.
    const foreign = await c.request('POST', `/admin/users/${target.id}/disable`, { form: { _csrf: token }, headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect((await c.request('POST', `/admin/users/${target.id}/disable`, { form: { _csrf: token } })).status).toBe(303);
  });
});

describe('user actions', () => {
  it('when an admin searches, then the API search answers, keyset paged, and the fragment is the results alone', async () => {
    const { c } = await staff('admin');
    const tag = `needle${Date.now().toString(36)}`;
    for (let i = 0; i < 27; i++) await makeUser(world().t, { email: `${tag}.${i}@example.test` });
    const first = await c.get(`/admin/users?q=${tag}`);
    expect(first.status).toBe(200);
    expect(first.text.match(/data-user-link/g)).toHaveLength(25);
    const next = /href="(\/admin\/users\?q=[^"]+cursor=[^"]+)" rel="next"/.exec(first.text)![1].replace(/&amp;/g, '&');
    const second = await c.get(next);
    expect(second.text.match(/data-user-link/g)).toHaveLength(2);
    const fragment = await c.get(`/admin/users?q=${tag}&fragment=1`);
    expect(fragment.text).not.toContain('<html');
    expect(fragment.text.match(/data-user-link/g)).toHaveLength(25);
    expect((await c.get('/admin/users?cursor=not-a-cursor')).status).toBe(400);
  });

  it("when a user's name holds markup, then the list and the user page show it escaped", async () => {
    const { c } = await staff('admin');
    const evil = await makeUser(world().t, { email: uniqueEmail('xss'), name: '<script>alert(1)</script><img src=x onerror=alert(2)>' });
    for (const p of [`/admin/users?q=${encodeURIComponent(evil.email)}`, `/admin/users/${evil.id}`]) {
      const r = await c.get(p);
      expect(r.text).not.toContain('<script>alert(1)');
      expect(r.text).not.toContain('<img src=x');
      expect(r.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    }
  });

  it('when an admin edits, verifies, disables, enables and sends a reset mail, then each lands with the admin as actor', async () => {
    const { c, user: admin } = await staff('admin');
    const target = await makeUser(world().t, { email: uniqueEmail('target'), is_verified: false });
    const page = `/admin/users/${target.id}`;
    const saved = await press(c, page, page, { name: 'Ada', last_name: 'Lovelace', email: target.email, phone: '', title: 'Countess' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`${page}?done=saved`);
    expect(await world().t.app.services.users.get(target.id)).toMatchObject({ name: 'Ada', last_name: 'Lovelace', title: 'Countess' });
    expect((await lastEvent('user.updated', target.id)).actor).toMatchObject({ id: admin.id, user_type: 'admin' });

    expect((await press(c, page, `${page}/verify`)).status).toBe(303);
    expect((await world().t.app.services.users.get(target.id)).is_verified).toBe(true);
    // As PUT /auth/admin/users/:id with is_verified: user.updated naming the field.
    expect(await lastEvent('user.updated', target.id)).toMatchObject({ actor: { id: admin.id }, details: { fields: ['is_verified'] } });

    expect((await press(c, page, `${page}/disable`)).status).toBe(303);
    expect((await world().t.app.services.users.get(target.id)).disabled_at).not.toBeNull();
    expect((await lastEvent('user.disabled', target.id)).actor).toMatchObject({ id: admin.id });
    expect((await press(c, page, `${page}/enable`)).status).toBe(303);
    expect((await world().t.app.services.users.get(target.id)).disabled_at).toBeNull();
    expect((await lastEvent('user.enabled', target.id)).actor).toMatchObject({ id: admin.id });

    const before = world().smtp.messages.length;
    expect((await press(c, page, `${page}/reset-mail`)).status).toBe(303);
    await world().smtp.waitFor((m) => world().smtp.messages.indexOf(m) >= before && JSON.stringify(m).includes(target.email.toLowerCase()));

    const bad = await press(c, page, page, { email: 'not-an-address' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('role="alert"');
  });

  it("when an admin revokes a user's session, then the app's next validation with it is 401 and session.revoked names the admin", async () => {
    const { c, user: admin } = await staff('admin');
    const { user, token } = await makeSession(world().t, { email: uniqueEmail('victim') });
    expect((await world().t.request('GET', '/auth/validation', { session: token })).status).toBe(200);
    const page = await c.get(`/admin/users/${user.id}`);
    const sid = /data-session="([^"]+)"/.exec(page.text)![1];
    const r = await c.request('POST', `/admin/users/${user.id}/sessions/${sid}/revoke`, { form: { _csrf: consoleCsrf(page.text) } });
    expect(r.status).toBe(303);
    expect((await world().t.request('GET', '/auth/validation', { session: token })).status).toBe(401);
    expect((await lastEvent('session.revoked', user.id)).actor).toMatchObject({ id: admin.id });
  });

  it("when an admin resets a user's two-factor, then the provider's reset ran with the admin as actor", async () => {
    const { c, user: admin } = await staff('admin');
    const { user } = await userWithEmail2fa(world());
    const page = `/admin/users/${user.id}`;
    expect((await c.get(page)).text).toContain('data-reset-two-factor');
    const r = await press(c, page, `${page}/two-factor/reset`);
    expect(r.status).toBe(303);
    expect((await world().t.app.services.users.get(user.id)).two_factor).toBe(false);
    expect((await lastEvent('two_factor.reset', user.id)).actor).toMatchObject({ id: admin.id });
  });

  it('when an admin tries to change a role or to touch a superadmin, then 403 and nothing changes', async () => {
    const { c } = await staff('admin');
    const target = await makeUser(world().t, { email: uniqueEmail('target') });
    const page = `/admin/users/${target.id}`;
    expect((await c.get(page)).text).not.toContain('name="user_type"');
    // Only a superadmin changes a role, to any role (the API's rule, admin-role-authorization.test.ts).
    for (const role of ['writer', 'admin', 'superadmin']) {
      const r = await press(c, page, `${page}/role`, { user_type: role });
      expect(r.status, role).toBe(403);
      expect((await world().t.app.services.users.get(target.id)).user_type).toBe('customer');
    }
    const boss = await makeUser(world().t, { email: uniqueEmail('boss'), user_type: 'superadmin' });
    const bossPage = await c.get(`/admin/users/${boss.id}`);
    expect(bossPage.text).not.toContain('/disable"');
    // Forged with a console token from another page: the service's rule refuses it.
    const token = consoleCsrf((await c.get(page)).text);
    expect((await c.request('POST', `/admin/users/${boss.id}/disable`, { form: { _csrf: token } })).status).toBe(403);
    expect((await world().t.app.services.users.get(boss.id)).disabled_at).toBeNull();
  });

  it('when a superadmin changes a role, then it lands and user.role_changed names the superadmin', async () => {
    const { c, user: boss } = await staff('superadmin');
    const target = await makeUser(world().t, { email: uniqueEmail('target') });
    const page = `/admin/users/${target.id}`;
    expect((await press(c, page, `${page}/role`, { user_type: 'admin' })).status).toBe(303);
    expect((await world().t.app.services.users.get(target.id)).user_type).toBe('admin');
    expect(await lastEvent('user.role_changed', target.id)).toMatchObject({ actor: { id: boss.id }, details: { from: 'customer', to: 'admin' } });
  });
});

describe('dashboard, audit, modules', () => {
  it('when an admin opens the dashboard, then counts, both charts and health are there', async () => {
    const { c } = await staff('admin');
    const r = await c.get('/admin');
    expect(r.text).toContain('data-chart="day"');
    expect(r.text).toContain('data-chart="month"');
    expect(r.text.match(/<svg class="chart"/g)).toHaveLength(2);
    expect(r.text).toMatch(/database: <span class="status-ok">ok/);
  });

  it('when people sign in and fail to, then both charts count them from the audit trail (a fresh app: the dashboard caches a minute)', async () => {
    const t = await startTestApp();
    try {
      const admin = await makeUser(t, { email: uniqueEmail('admin'), user_type: 'admin' });
      const bad = await t.request('POST', '/auth/login', { body: { email: admin.email, password: 'Wrong-Horse-00' } });
      expect(bad.status).toBe(401);
      await expect.poll(async () => (await t.app.services.audit.list({ types: ['sign_in.failed'], limit: 5 })).events.length).toBe(1);
      const c = new WebClient(t.url);
      await c.submit('/login', '/login', { email: admin.email, password: DEFAULT_PASSWORD });
      await t.request('POST', '/auth/login', { body: { email: admin.email, password: DEFAULT_PASSWORD } });
      const r = await c.get('/admin');
      const day = /data-chart="day"[\s\S]*?Sign-ins: (\d+)[\s\S]*?Failed sign-ins: (\d+)/.exec(r.text)!;
      const month = /data-chart="month"[\s\S]*?Sign-ins: (\d+)[\s\S]*?Failed sign-ins: (\d+)/.exec(r.text)!;
      expect([Number(day[1]), Number(day[2])]).toEqual([2, 1]);
      expect([Number(month[1]), Number(month[2])]).toEqual([2, 1]);
      expect(r.text.match(/<rect class="bar-ok"/g)!.length).toBeGreaterThanOrEqual(2);
    } finally {
      await t.close();
    }
  });

  it('when the audit explorer is filtered, then it answers as the API does, and a bad filter is a 400 page', async () => {
    const { c, user } = await staff('admin');
    const r = await c.get(`/admin/audit?type=sign_in.succeeded&user_id=${user.id}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain('sign_in.succeeded');
    expect((await c.get('/admin/audit?type=no.such_type')).status).toBe(400);
    expect((await c.get('/admin/audit?since=yesterday')).status).toBe(400);
  });

  it('when a superadmin switches a module off and on, then the hub did it; an admin may not', async () => {
    const { c: admin, user: adminUser } = await staff('admin');
    const page = await admin.get('/admin/modules');
    expect(page.text).toContain('gatehouse module install');
    expect(page.text).not.toContain('/admin/modules/two-factor/disable');
    const token = consoleCsrf((await admin.get(`/admin/users/${adminUser.id}`)).text);
    const refused = await admin.request('POST', '/admin/modules/two-factor/disable', { form: { _csrf: token } });
    expect(refused.status).toBe(403);
    const { c, user: boss } = await staff('superadmin');
    expect((await press(c, '/admin/modules', '/admin/modules/two-factor/disable')).status).toBe(303);
    expect((await world().t.app.modules.hub.status(['two-factor']))[0].enabled).toBe(false);
    expect((await press(c, '/admin/modules', '/admin/modules/two-factor/enable')).status).toBe(303);
    expect((await world().t.app.modules.hub.status(['two-factor']))[0].enabled).toBe(true);
    const toggled = await world().t.app.services.audit.list({ types: ['module.toggled'], actorId: boss.id, limit: 2 });
    expect(toggled.events).toHaveLength(2);
  });
});
