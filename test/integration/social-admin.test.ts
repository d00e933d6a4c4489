import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { APPS, startOAuthServers, type FakeUser, type OAuthServers } from '../helpers/social-oauth-servers.js';
import { WEBHOOK_TEST_ENV } from '../helpers/webhook-receiver.js';
import { WebClient } from '../helpers/web-client.js';
import { mailTo } from './flows-helpers.js';
import { accountsOf, socialEnv } from './social-helpers.js';

/**
 * An admin removes a user's linked social account: GET/DELETE /auth/admin/users/:user_id/social-accounts
 * and the console's form on the user page, both through `social.adminUnlink`, against local stand-ins
 * for GitHub and Discord.
 */

let servers: OAuthServers;
let w: AppWithMail;

beforeAll(async () => {
  servers = await startOAuthServers();
  const cfg = (p: 'github' | 'discord') => ({ client_id: APPS[p].clientId, client_secret: APPS[p].secret, endpoints: servers.endpoints(p) });
  w = await startAppWithMail({ env: { ...socialEnv({ github: cfg('github'), discord: cfg('discord') }), ...WEBHOOK_TEST_ENV } });
});
afterAll(async () => {
  await w?.close();
  await servers?.close();
});

let seq = 0;
const fake = (over: Partial<FakeUser> = {}): FakeUser => ({
  id: `${Date.now()}${++seq}`,
  email: uniqueEmail('adm-social'),
  verified: true,
  name: 'Ad Min',
  ...over,
});

/** A provider sign-in (mobile) for `gh`: links to a verified local user with that address, or creates one without a password. */
async function signInWith(provider: 'github' | 'discord', gh: FakeUser): Promise<string> {
  const r = await w.t.request('POST', `/auth/social/${provider}/login-api`, { body: { accessToken: servers.mint(provider, gh) } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.user.id as string;
}

/** A user with a password and a linked GitHub account. */
async function linkedUser(values: Parameters<typeof makeUser>[1] = {}) {
  const user = await makeUser(w.t, { email: uniqueEmail('linked'), is_verified: true, ...values });
  expect(await signInWith('github', fake({ email: user.email }))).toBe(user.id);
  return user;
}

const path = (userId: string, provider?: string) => `/auth/admin/users/${userId}/social-accounts${provider ? `/${provider}` : ''}`;

describe(`admin removal of a user's social account (${BACKEND})`, () => {
  it('when an admin lists and unlinks, then the account goes, social.unlinked names the admin, the user is mailed, a webhook is queued', async () => {
    const { endpoint } = await w.t.app.services.webhooks.create({ url: 'http://127.0.0.1:9/hook', events: ['social.unlinked'] });
    const before = (await w.t.app.services.webhooks.pendingStats()).pending;
    const user = await linkedUser({ name: 'Lia' });
    const admin = await makeSession(w.t, { user_type: 'admin' });

    const list = await w.t.request('GET', path(user.id), { session: admin.token });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ success: true, user_id: user.id, accounts: [{ provider: 'github', provider_email: user.email }] });
    expect(list.body.accounts[0]).not.toHaveProperty('access_token');

    const r = await w.t.request('DELETE', path(user.id, 'github'), { session: admin.token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, provider: 'github' });
    expect(await accountsOf(w.t, { user_id: user.id })).toHaveLength(0);

    const [event] = (await w.t.app.services.audit.list({ userId: user.id, types: ['social.unlinked'] })).events;
    expect(event.actor).toMatchObject({ id: admin.user.id });
    expect(event.details).toEqual({ provider: 'github', by: 'admin' });
    const mail = await mailTo(w.smtp, user.email, /^A GitHub account was unlinked from your Gatehouse account$/);
    expect(mail.text).toContain('administrator');
    expect((await w.t.app.services.webhooks.pendingStats()).pending).toBe(before + 1);
    await w.t.app.services.webhooks.remove(endpoint.id);

    const again = await w.t.request('DELETE', path(user.id, 'github'), { session: admin.token });
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ success: false, code: 'SOCIAL_ACCOUNT_NOT_LINKED' });
  });

  it('when it is the last way in (no password, one provider), then 400 SOCIAL_LAST_SIGN_IN_METHOD and nothing changes; with a second provider it goes', async () => {
    const gh = fake();
    const userId = await signInWith('github', gh);
    const admin = await makeSession(w.t, { user_type: 'admin' });
    const refused = await w.t.request('DELETE', path(userId, 'github'), { session: admin.token });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ success: false, code: 'SOCIAL_LAST_SIGN_IN_METHOD' });
    expect(refused.body.error).toMatch(/the user's only way/);
    expect(await accountsOf(w.t, { user_id: userId })).toHaveLength(1);
    expect((await w.t.app.services.audit.list({ userId, types: ['social.unlinked'] })).events).toEqual([]);

    // A second provider with the same verified address joins the same user: then one may go.
    expect(await signInWith('discord', fake({ email: gh.email }))).toBe(userId);
    expect((await w.t.request('DELETE', path(userId, 'github'), { session: admin.token })).status).toBe(200);
  });

  it('when the caller is not staff, the target is a superadmin of an admin, or the input is bad, then a clear 4xx and the account stays', async () => {
    const boss = await linkedUser({ user_type: 'superadmin' });
    const admin = await makeSession(w.t, { user_type: 'admin' });
    const customer = await makeSession(w.t);
    expect((await w.t.request('GET', path(boss.id), { session: customer.token })).status).toBe(403);
    expect((await w.t.request('DELETE', path(boss.id, 'github'), { session: customer.token })).status).toBe(403);
    expect((await w.t.request('DELETE', path(boss.id, 'github'))).status).toBe(401);
    const byAdmin = await w.t.request('DELETE', path(boss.id, 'github'), { session: admin.token });
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
    expect(await accountsOf(w.t, { user_id: boss.id })).toHaveLength(1);

    const unknownUser = await w.t.request('GET', path('00000000-0000-7000-8000-000000000000'), { session: admin.token });
    expect(unknownUser.status).toBe(404);
    const superadmin = await makeSession(w.t, { user_type: 'superadmin' });
    const unknownProvider = await w.t.request('DELETE', path(boss.id, 'myspace'), { session: superadmin.token });
    expect(unknownProvider.status).toBe(404);
    expect(unknownProvider.body.code).toBe('SOCIAL_ACCOUNT_NOT_LINKED');
    const tooLong = await w.t.request('DELETE', path(boss.id, 'x'.repeat(40)), { session: superadmin.token });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect((await w.t.request('DELETE', path(boss.id, 'github'), { session: superadmin.token })).status).toBe(200);
  });

  it('when social login is off, then the admin routes answer 503 SOCIAL_LOGIN_DISABLED', async () => {
    const off = await startAppWithMail({ env: { ...socialEnv({ github: { client_id: 'a', client_secret: 'b' } }, { SOCIAL_LOGIN: 'false' }) } });
    try {
      const admin = await makeSession(off.t, { user_type: 'admin' });
      const user = await makeUser(off.t);
      for (const [m, p] of [
        ['GET', path(user.id)],
        ['DELETE', path(user.id, 'github')],
      ] as const) {
        const r = await off.t.request(m, p, { session: admin.token });
        expect({ p, status: r.status, code: r.body.code }).toEqual({ p, status: 503, code: 'SOCIAL_LOGIN_DISABLED' });
      }
    } finally {
      await off.close();
    }
  });
});

/** The console's token: the last CSRF field on a console page (the layout's sign-out form carries the pages' token first). */
const consoleCsrf = (html: string) => [...html.matchAll(/name="_csrf" value="([^"]+)"/g)].map((m) => m[1]).at(-1)!;

async function consoleAs(email: string) {
  const c = new WebClient(w.t.url);
  expect((await c.submit('/login', '/login', { email, password: DEFAULT_PASSWORD })).status).toBe(303);
  return c;
}

describe(`the console's social accounts on a user's page (${BACKEND})`, () => {
  it('when an admin removes a linked account from the user page, then it is unlinked through the service, and a refusal shows the page with its message', async () => {
    const user = await linkedUser();
    const admin = await makeUser(w.t, { email: uniqueEmail('console-admin'), user_type: 'admin' });
    const c = await consoleAs(admin.email);
    const page = await c.get(`/admin/users/${user.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-social="github"');
    expect(page.text).toContain('Remove the GitHub link');
    const token = consoleCsrf(page.text);

    // Without the console token: the 403 page, nothing removed.
    expect((await c.request('POST', `/admin/users/${user.id}/social/github/remove`, { form: {} })).status).toBe(403);
    expect(await accountsOf(w.t, { user_id: user.id })).toHaveLength(1);

    const done = await c.request('POST', `/admin/users/${user.id}/social/github/remove`, { form: { _csrf: token } });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/admin/users/${user.id}?done=social_removed`);
    expect(await accountsOf(w.t, { user_id: user.id })).toHaveLength(0);
    const after = await c.get(done.location!);
    expect(after.text).toContain('Social account unlinked');
    expect(after.text).not.toContain('data-social="github"');
    const [event] = (await w.t.app.services.audit.list({ userId: user.id, types: ['social.unlinked'] })).events;
    expect(event.actor).toMatchObject({ id: admin.id });

    // The last way in: the page again, 400, with the service's message.
    const only = await signInWith('github', fake());
    const refused = await c.request('POST', `/admin/users/${only}/social/github/remove`, { form: { _csrf: token } });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('only way to sign in');
    expect(await accountsOf(w.t, { user_id: only })).toHaveLength(1);
  });

  it("when an admin opens a superadmin's page, then the accounts show without a remove form, and a forged post is 403", async () => {
    const boss = await linkedUser({ user_type: 'superadmin' });
    const admin = await makeUser(w.t, { email: uniqueEmail('console-admin'), user_type: 'admin' });
    const c = await consoleAs(admin.email);
    const page = await c.get(`/admin/users/${boss.id}`);
    expect(page.text).toContain('data-social="github"');
    expect(page.text).not.toContain(`/admin/users/${boss.id}/social/github/remove`);
    const r = await c.request('POST', `/admin/users/${boss.id}/social/github/remove`, { form: { _csrf: consoleCsrf(page.text) } });
    expect(r.status).toBe(403);
    expect(await accountsOf(w.t, { user_id: boss.id })).toHaveLength(1);
  });
});
