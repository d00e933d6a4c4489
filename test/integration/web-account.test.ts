import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { appWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { createBrowser } from '../helpers/browser.js';
import { APPS, startOAuthServers, type OAuthServers } from '../helpers/social-oauth-servers.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { csrfIn, WebClient } from '../helpers/web-client.js';
import { codeIn, mailsTo, recipients } from './flows-helpers.js';
import { accountsOf, FRONTEND, PUBLIC, PUBLIC_HOST, socialEnv } from './social-helpers.js';
import { addPasskey, ORIGIN, RP_ID } from '../../modules/passkeys/test/world.js';

// The account page (/account) over plain HTTP, no browser: each action's effect through the API's
// services and the modules' routes, its audit event with the user as actor, CSRF, sessions, escaping.
const { t, smtp } = appWithMail({ env: { WEB_PAGES: 'true', RATE_LIMIT_TWO_FACTOR: '100000/1m', WEBAUTHN_RP_ID: RP_ID, WEBAUTHN_ORIGINS: ORIGIN } });
beforeAll(async () => {
  await t.app.modules.hub.install(['two-factor', 'passkeys', 'privacy']);
});

/** A browser signed in at /login as a new user (the pages' own sign-in), on /account. */
async function signedIn(values: Partial<UserRecord> = {}, headers: Record<string, string> = {}) {
  const user = await makeUser(t, { email: uniqueEmail('acct'), ...values });
  const c = new WebClient(t.url, headers);
  const r = await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD });
  expect(r.location).toBe('/account');
  return { c, user };
}

const post = (c: WebClient, action: string, form: Record<string, string> = {}) => c.submit('/account', action, form);
const events = async (userId: string, type: string) => (await t.app.services.audit.list({ userId, types: [type], limit: 50 })).events;
const validation = (token: string) => t.request('GET', '/auth/validation', { session: token });
const fresh = (id: string) => t.app.repos.users.findById(id);

describe('who sees /account', () => {
  it('when no session or a dead one, then 303 to /login?return_to=/account', async () => {
    const none = await new WebClient(t.url).get('/account');
    expect(none.status).toBe(303);
    expect(none.location).toBe('/login?return_to=%2Faccount');
    const dead = new WebClient(t.url);
    dead.jar.set('session_id', 'not-a-session');
    expect((await dead.get('/account')).location).toBe('/login?return_to=%2Faccount');
  });

  it('when the session is pending its second step, then the page and every post are refused (redirect to sign in), nothing changes', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('pend') });
    // A TOTP method through the API turns two-factor on; the next sign-in is pending.
    const setup = await t.request('POST', '/auth/two_factor/totp/setup', { session: token, body: {} });
    const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(setup.body.secret) }).generate();
    expect(
      (await t.request('POST', '/auth/two_factor/verify', { session: token, body: { method_id: setup.body.method_id, code, action: 'setup' } })).status,
    ).toBe(200);
    const c = new WebClient(t.url);
    const r = await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD });
    expect(r.location).toBe('/login/two-factor');
    const page = await c.get('/account');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/login?return_to=%2Faccount');
    const token2 = csrfIn((await c.get('/login/two-factor')).text);
    const p = await c.request('POST', '/account/profile', { form: { _csrf: token2, name: 'Changed' } });
    expect(p.status).toBe(303);
    expect(p.location).toBe('/login?return_to=%2Faccount');
    expect((await fresh(user.id))!.name).toBe(user.name);
  });

  it('when a signed-in user opens it, then every section is there and the page is strict (CSP nonce, no inline handlers)', async () => {
    const { c, user } = await signedIn({ name: 'Ada' });
    const r = await c.get('/account');
    expect(r.status).toBe(200);
    for (const id of ['profile', 'email', 'password', 'second-step', 'passkey-list', 'sessions', 'events', 'your-data']) expect(r.text).toContain(`id="${id}"`);
    expect(r.text).toContain(user.email);
    expect(r.text).toContain('href="/auth/user/me/privacy/export"');
    // The sign-in just made is the newest security event, named in words.
    expect(r.text).toMatch(/<li data-event="sign_in\.succeeded"><span>Signed in<\/span>/);
    expect(r.text).toMatch(/src="\/web\/assets\/simplewebauthn-browser\.[0-9a-f]{12}\.js"/);
    expect(r.text).not.toMatch(/\son[a-z]+=|style="/i);
    const nonce = /'nonce-([^']+)'/.exec(r.headers.get('content-security-policy')!)![1];
    for (const tag of r.text.match(/<(script|style)\b[^>]*>/g) ?? []) expect(tag).toContain(`nonce="${nonce}"`);
  });
});

describe('profile and password', () => {
  it('when the profile is saved, then PUT /auth/user/me’s service wrote it, an empty field is cleared, user.updated names the fields with the user as actor', async () => {
    const { c, user } = await signedIn({ title: 'Old title' });
    const r = await post(c, '/account/profile', { name: 'Grace', last_name: 'Hopper', title: '', lang: 'es' });
    expect(r.status).toBe(303);
    expect(r.location).toBe('/account?done=profile#profile');
    const u = (await fresh(user.id))!;
    expect(u).toMatchObject({ name: 'Grace', last_name: 'Hopper', title: null, lang: 'es' });
    const [e] = await events(user.id, 'user.updated');
    expect(e.actor).toMatchObject({ id: user.id });
    expect(e.details.fields).toEqual(expect.arrayContaining(['name', 'last_name', 'title', 'lang']));
    // The page now speaks the user's language.
    expect((await c.get('/account?done=profile')).text).toContain('Tu perfil se ha guardado.');
  });

  it('when a field breaks the API’s rules, then 400 with the reason on the page and nothing written', async () => {
    const { c, user } = await signedIn();
    const r = await post(c, '/account/profile', { name: 'Fine', dob: 'not-a-date' });
    expect(r.status).toBe(400);
    expect(r.text).toContain('role="alert"');
    expect(r.text).toMatch(/dob/);
    expect((await fresh(user.id))!.name).toBe(user.name);
  });

  it('when the form comes without the CSRF token, or with another browser’s, then 403 and nothing written', async () => {
    const { c, user } = await signedIn();
    const none = await c.request('POST', '/account/profile', { form: { name: 'Forged' } });
    expect(none.status).toBe(403);
    const other = csrfIn((await new WebClient(t.url).get('/login')).text);
    const foreign = await c.request('POST', '/account/profile', { form: { _csrf: other, name: 'Forged' } });
    expect(foreign.status).toBe(403);
    const revoke = await c.request('POST', '/account/sessions/revoke-others', { form: {} });
    expect(revoke.status).toBe(403);
    expect((await fresh(user.id))!.name).toBe(user.name);
  });

  it('when the current password is wrong, then the API’s 400 on the page; when right, the password changes and other sessions end, this one stays', async () => {
    const { c, user } = await signedIn();
    const { token: other } = await t.app.services.sessions.create(user.id, { ip: '127.0.0.1', userAgent: 'other device' });
    const bad = await post(c, '/account/password', { current_password: 'wrong-password-1', new_password: 'A-new-password-77' });
    expect(bad.status).toBe(400); // the API's INVALID_CURRENT_PASSWORD answer
    expect(bad.text).toContain('Current password is incorrect');
    const weak = await post(c, '/account/password', { current_password: DEFAULT_PASSWORD, new_password: 'short' });
    expect(weak.status).toBe(400);
    const ok = await post(c, '/account/password', { current_password: DEFAULT_PASSWORD, new_password: 'A-new-password-77' });
    expect(ok.location).toBe('/account?done=password#password');
    expect((await validation(other)).status).toBe(401);
    expect((await c.get('/account')).status).toBe(200);
    const login = await t.request('POST', '/auth/login', { body: { email: user.email, password: 'A-new-password-77' } });
    expect(login.status).toBe(200);
    const [e] = await events(user.id, 'password.changed');
    expect(e.actor).toMatchObject({ id: user.id });
  });

  it('the email is shown, and changed through its own form (a link to the new address, web-email-change.test.ts), not the profile', async () => {
    const { c, user } = await signedIn();
    const r = await c.get('/account');
    expect(r.text).toContain(user.email);
    expect(r.text).toContain('action="/account/email"');
    expect(r.text).not.toMatch(/name="email"/);
  });
});

describe('sessions', () => {
  it('when "sign out" is pressed on another session, then that session is gone (its validation 401) and session.revoked says by: user', async () => {
    const { c, user } = await signedIn();
    const { token: other } = await t.app.services.sessions.create(user.id, { ip: '10.9.8.7', userAgent: 'Other Browser 1.0' });
    const page = await c.get('/account');
    expect(page.text).toContain('Other Browser 1.0');
    const ids = [...page.text.matchAll(/name="session_id" value="([^"]+)"/g)].map((m) => m[1]);
    expect(ids).toHaveLength(1);
    const r = await post(c, '/account/sessions/revoke', { session_id: ids[0] });
    expect(r.location).toBe('/account?done=session#sessions');
    expect((await validation(other)).status).toBe(401);
    expect((await c.get('/account')).text).not.toContain('Other Browser 1.0');
    const [e] = await events(user.id, 'session.revoked');
    expect(e).toMatchObject({ actor: { id: user.id }, details: { by: 'user', count: 1 } });
  });

  it('when a session id is not the user’s or is this one, then 404 and nothing ends', async () => {
    const { c, user } = await signedIn();
    const stranger = await makeSession(t, { email: uniqueEmail('stranger') });
    const theirs = (await t.app.services.users.listSessions(stranger.user.id))[0].id;
    expect((await post(c, '/account/sessions/revoke', { session_id: theirs })).status).toBe(404);
    expect((await validation(stranger.token)).status).toBe(200);
    const mine = (await t.app.services.users.listSessions(user.id))[0].id;
    expect((await post(c, '/account/sessions/revoke', { session_id: mine })).status).toBe(404);
    expect((await c.get('/account')).status).toBe(200);
  });

  it('when "sign out everywhere else" is pressed, then every other session ends and this one stays', async () => {
    const { c, user } = await signedIn();
    const a = await t.app.services.sessions.create(user.id, { ip: '127.0.0.1', userAgent: 'A' });
    const b = await t.app.services.sessions.create(user.id, { ip: '127.0.0.1', userAgent: 'B' });
    const r = await post(c, '/account/sessions/revoke-others');
    expect(r.location).toBe('/account?done=sessions#sessions');
    expect((await validation(a.token)).status).toBe(401);
    expect((await validation(b.token)).status).toBe(401);
    expect(await t.app.services.users.listSessions(user.id)).toHaveLength(1);
    const [e] = await events(user.id, 'session.revoked');
    expect(e.details).toMatchObject({ by: 'user', count: 2 });
  });
});

describe('two-factor (the module’s API routes)', () => {
  it('when TOTP is added, then the QR code and key are shown; a right first code activates it, turns two-step verification on and shows the backup codes once; new codes take a code; devices are forgotten; a method is removed with a code', async () => {
    const { c, user } = await signedIn();
    expect((await c.get('/account')).text).toContain('Two-step verification is off. Add a method to turn it on.');
    const added = await post(c, '/account/two-factor/add', { method: 'totp' });
    expect(added.status).toBe(200);
    expect(added.text).toMatch(/<img class="qr" src="data:image\/png;base64,[A-Za-z0-9+/=]+"/);
    // Shown in groups of four (as people type it into an app).
    const secret = /data-totp-secret>([A-Z2-7 ]+)</.exec(added.text)![1].replace(/ /g, '');
    const methodId = /name="method_id" value="([^"]+)"/.exec(added.text)![1];
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
    const wrong = await c.submit('/account', '/account/two-factor/confirm', { method_id: methodId, code: '000000' });
    expect(wrong.status).toBe(400);
    expect((await fresh(user.id))!.two_factor).toBeFalsy();
    // The first method: two-step verification is on, and the backup codes made then are shown (rendered, not redirected).
    const ok = await c.submit('/account', '/account/two-factor/confirm', { method_id: methodId, code: totp.generate() });
    expect(ok.status, ok.text.slice(0, 2000)).toBe(200);
    expect(ok.text).toContain('The verification method was added. Two-step verification is now on.');
    expect(ok.text).toContain('Two-step verification is on.');
    expect(ok.text).toContain('id="codes"');
    const shown = [...ok.text.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]);
    expect(new Set(shown).size).toBe(10);
    expect((await fresh(user.id))!.two_factor).toBeTruthy();
    const page = (await c.get('/account')).text;
    expect(page).toContain('Authenticator app');
    expect(page).toContain('Two-step verification is on.');
    // Shown once: the page does not show them again.
    expect(page).not.toMatch(/[a-z0-9]{5}-[a-z0-9]{5}<\/code>/);
    expect((await events(user.id, 'two_factor.method_added')).map((e) => e.details?.method).sort()).toEqual(['backup_codes', 'totp']);
    const [enabled] = await events(user.id, 'two_factor.enabled');
    expect(enabled.actor).toMatchObject({ id: user.id });

    // New backup codes: with two-factor on, the API asks for a code from a method in use (here the app's next one).
    const refused = await post(c, '/account/two-factor/backup-codes');
    expect(refused.status).toBe(400);
    const codes = await post(c, '/account/two-factor/backup-codes', { verification_code: totp.generate({ timestamp: Date.now() + 30_000 }) });
    expect(codes.status, codes.text.slice(0, 2000)).toBe(200);
    const renewed = [...codes.text.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]);
    expect(renewed).toHaveLength(10);
    expect(renewed.filter((x) => shown.includes(x))).toEqual([]);

    const forget = await post(c, '/account/two-factor/forget-devices');
    expect(forget.location).toBe('/account?done=devices#second-step');

    // The authenticator app is the last method that stands alone: it cannot go; the backup codes can, with one of them as the code.
    const last = await post(c, '/account/two-factor/remove', { method_id: methodId, verification_code: renewed[0] });
    expect(last.status).toBe(400);
    expect(last.text).toContain('This is your last two-factor method');
    const backupId = (await events(user.id, 'two_factor.method_added')).find((e) => e.details?.method === 'backup_codes')!.details!.method_id as string;
    const removed = await post(c, '/account/two-factor/remove', { method_id: backupId, verification_code: renewed[1] });
    expect(removed.location, removed.text.slice(0, 2000)).toBe('/account?done=two_factor_removed#second-step');
    expect((await events(user.id, 'two_factor.method_removed'))[0]).toMatchObject({
      actor: { id: user.id },
      details: { method: 'backup_codes', method_id: backupId },
    });
  });
});

describe('two-factor by email (a code sent to confirm)', () => {
  it('when the email method is added, then the page asks for the mailed code; the right code activates it', async () => {
    const { c, user } = await signedIn();
    const before = mailsTo(smtp, user.email).length;
    const added = await post(c, '/account/two-factor/add', { method: 'email' });
    expect(added.status).toBe(200);
    expect(added.text).toContain('id="confirm-code"');
    const methodId = /name="method_id" value="([^"]+)"/.exec(added.text)![1];
    const mail = await smtp.waitFor((m) => recipients(m).includes(user.email.toLowerCase()) && mailsTo(smtp, user.email).indexOf(m) >= before);
    const ok = await c.submit('/account', '/account/two-factor/confirm', { method_id: methodId, code: codeIn(mail.text) });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('Two-step verification is on.');
    expect([...ok.text.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)]).toHaveLength(10);
    expect((await fresh(user.id))!.two_factor).toBeTruthy();
    expect((await c.get('/account')).text).toContain('Code by email');
  });
});

describe('passkeys, privacy, escaping', () => {
  it('when a passkey of the user is renamed or removed, then through the module’s routes; another user’s passkey id is 404', async () => {
    const { c, user } = await signedIn();
    const { token } = await t.app.services.sessions.create(user.id, { ip: '127.0.0.1', userAgent: 'vitest' });
    const { r: added } = await addPasskey(t, token, { name: 'Laptop' });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const id = added.body.passkey.id as string;
    expect((await c.get('/account')).text).toContain('value="Laptop"');
    const renamed = await post(c, '/account/passkeys/rename', { id, name: '<b>Work</b>' });
    expect(renamed.location).toBe('/account?done=passkey_renamed#passkey-list');
    const after = (await c.get('/account')).text;
    expect(after).toContain('&lt;b&gt;Work&lt;/b&gt;');
    expect(after).not.toContain('<b>Work</b>');
    expect((await post(c, '/account/passkeys/remove', { id: '00000000-0000-0000-0000-000000000000' })).status).toBe(404);
    expect((await post(c, '/account/passkeys/remove', { id })).location).toBe('/account?done=passkey_removed#passkey-list');
  });

  it("when the user's name and a session's user agent carry markup, then the page shows them as text", async () => {
    const evil = '<script>alert(1)</script>';
    const { c } = await signedIn({ name: evil }, { 'user-agent': '<img src=x onerror=alert(2)>' });
    const r = await c.get('/account');
    expect(r.text).not.toContain(evil);
    expect(r.text).not.toContain('<img src=x');
    expect(r.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(r.text).toContain('&lt;img src=x onerror=alert(2)&gt;');
  });

  it('when the account is deleted through the privacy module, then a wrong password is refused, the right one erases and signs out', async () => {
    const { c, user } = await signedIn();
    const noConfirm = await post(c, '/account/privacy/delete', { password: DEFAULT_PASSWORD });
    expect(noConfirm.status).toBe(400);
    const wrong = await post(c, '/account/privacy/delete', { password: 'wrong-password-1', confirm: 'yes' });
    expect(wrong.status).toBe(401);
    expect(await fresh(user.id)).not.toBeNull();
    const ok = await post(c, '/account/privacy/delete', { password: DEFAULT_PASSWORD, confirm: 'yes' });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe('/login');
    expect(await fresh(user.id)).toBeNull();
    expect((await c.get('/account')).location).toBe('/login?return_to=%2Faccount');
  });

  it('when the privacy export link is followed with the page’s cookie, then the API route answers the user’s data', async () => {
    const { c, user } = await signedIn();
    const r = await c.request('GET', '/auth/user/me/privacy/export', { headers: { accept: 'application/json' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-disposition')).toContain('attachment');
    expect(r.text).toContain(user.email);
  });
});

describe('linked social accounts (an app with a provider configured)', () => {
  let servers: OAuthServers;
  let s: TestApp;
  beforeAll(async () => {
    servers = await startOAuthServers();
    s = await startTestApp({
      env: socialEnv(
        { github: { client_id: APPS.github.clientId, client_secret: APPS.github.secret, endpoints: servers.endpoints('github') } },
        { WEB_PAGES: 'true' },
      ),
    });
  });
  afterAll(async () => {
    await s?.close();
    await servers?.close();
  });

  it('when a provider is linked, then the page lists it with Unlink; unlinking goes through the API’s service (social.unlinked, the user as actor)', async () => {
    const user = await makeUser(s, { email: uniqueEmail('soc') });
    const c = new WebClient(s.url);
    expect((await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD })).location).toBe('/account');
    const before = await c.get('/account');
    expect(before.text).toContain('id="social"');
    expect(before.text).toMatch(/href="\/auth\/social\/github\/login\?link=true&amp;return_to=[^"]+"/);

    servers.nextUser('github', { id: `${Date.now()}`, email: uniqueEmail('gh'), verified: true, name: 'Git Hub' });
    const browser = createBrowser([FRONTEND], { [PUBLIC]: s.url });
    browser.setCookie(PUBLIC_HOST, 'session_id', c.jar.get('session_id')!);
    await browser.go(`${PUBLIC}/auth/social/github/login?link=true`);
    expect(await accountsOf(s, { user_id: user.id })).toHaveLength(1);

    const linked = await c.get('/account');
    expect(linked.text).toContain('name="provider" value="github"');
    const r = await c.submit('/account', '/account/social/unlink', { provider: 'github' });
    expect(r.location).toBe('/account?done=unlinked#social');
    expect(await accountsOf(s, { user_id: user.id })).toHaveLength(0);
    const [e] = (await s.app.services.audit.list({ userId: user.id, types: ['social.unlinked'], limit: 5 })).events;
    expect(e).toMatchObject({ actor: { id: user.id }, details: { provider: 'github' } });
    // Nothing linked any more: a second unlink is the API's 404.
    expect((await c.submit('/account', '/account/social/unlink', { provider: 'github' })).status).toBe(404);
  });
});

describe('rate limits', () => {
  let tight: TestApp;
  beforeAll(async () => {
    tight = await startTestApp({ env: { RATE_LIMIT_LOGIN: '3/1m' } });
  });
  afterAll(async () => tight?.close());

  it('when the page posts more password changes than the login class allows, then 429, counted with the API’s own password change', async () => {
    const { user, token } = await makeSession(tight, { email: uniqueEmail('pwlimit') });
    const c = new WebClient(tight.url);
    c.jar.set('session_id', token);
    const csrf = csrfIn((await c.get('/account')).text);
    const change = (current: string) =>
      c.request('POST', '/account/password', { form: { _csrf: csrf, current_password: current, new_password: 'A-new-password-77' } });
    const first = await change('wrong-password-1');
    expect(first.status).toBe(400);
    expect(first.headers.get('x-ratelimit-limit')).toBe('3');
    await tight.request('POST', '/auth/password-change/self', { session: token, body: { current_password: 'wrong-2', new_password: 'A-new-password-77' } });
    expect((await change('wrong-password-3')).status).toBe(400);
    const refused = await change(DEFAULT_PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('Too many attempts');
    expect((await tight.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } })).status).toBe(429);
    expect((await tight.app.repos.users.findById(user.id))!.password_hash).toBe(user.password_hash);
  });
});
