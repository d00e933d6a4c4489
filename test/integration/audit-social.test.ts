import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/audit/audit-types.js';
import { createBrowser } from '../helpers/browser.js';
import { makeSession, uniqueEmail } from '../helpers/factories.js';
import { APPS, startOAuthServers, type FakeUser, type OAuthServers } from '../helpers/social-oauth-servers.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { FRONTEND, PUBLIC, PUBLIC_HOST, socialEnv } from './social-helpers.js';

/** Social sign-in, linking and unlinking as security events, through the real provider flows. */

let servers: OAuthServers;
let t: TestApp;

beforeAll(async () => {
  servers = await startOAuthServers();
  t = await startTestApp({
    env: socialEnv({ github: { client_id: APPS.github.clientId, client_secret: APPS.github.secret, endpoints: servers.endpoints('github') } }),
  });
});
afterAll(async () => {
  await t?.close();
  await servers?.close();
});

let seq = 0;
const fake = (over: Partial<FakeUser> = {}): FakeUser => ({
  id: `${Date.now()}${++seq}`,
  email: uniqueEmail('au-social'),
  verified: true,
  name: 'So Cial',
  ...over,
});
const rid = () => `rid-${randomBytes(6).toString('hex')}`;

async function eventsOf(userId: string, type: string): Promise<AuditEvent[]> {
  return (await t.app.services.audit.list({ userId, types: [type] })).events;
}
async function oneEvent(userId: string, type: string): Promise<AuditEvent> {
  await expect.poll(async () => (await eventsOf(userId, type)).length, { timeout: 5000 }).toBe(1);
  return (await eventsOf(userId, type))[0];
}
async function expectNoSecrets(e: AuditEvent, secrets: string[]): Promise<void> {
  const [rows] = await t.app.sequelize.query('SELECT * FROM audit_events WHERE id = ?', { replacements: [e.id] });
  const raw = JSON.stringify(rows);
  for (const s of secrets) expect(raw, `the row holds ${s}`).not.toContain(s);
}
const fromHere = (e: AuditEvent) => expect(e.ip).toMatch(/^(::ffff:)?127\.0\.0\.1$/);

const loginApi = (accessToken: string, requestId: string) =>
  t.request('POST', '/auth/social/github/login-api', { body: { accessToken }, headers: { 'X-Request-ID': requestId } });

describe('social security events', () => {
  it('when a new user signs in with a provider, then social.linked (sign_up) and sign_in.succeeded with method social:github', async () => {
    const gh = fake();
    const accessToken = servers.mint('github', gh);
    const id = rid();
    const r = await loginApi(accessToken, id);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const userId = r.body.user.id as string;
    const signedIn = await oneEvent(userId, 'sign_in.succeeded');
    expect(signedIn).toMatchObject({ user_id: userId, actor: { id: userId, user_type: 'customer' }, request_id: id, details: { method: 'social:github' } });
    fromHere(signedIn);
    const linked = await oneEvent(userId, 'social.linked');
    expect(linked).toMatchObject({ user_id: userId, actor: { id: userId }, request_id: id, details: { provider: 'github', via: 'sign_up' } });
    for (const e of [signedIn, linked]) await expectNoSecrets(e, [accessToken, r.body.session_id]);
  });

  it('when a signed-in user links a provider and then unlinks it, then social.linked and social.unlinked name them as actor', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('au-link') });
    servers.nextUser('github', fake());
    const browser = createBrowser([FRONTEND], { [PUBLIC]: t.url });
    browser.setCookie(PUBLIC_HOST, 'session_id', token);
    const landing = await browser.go(`${PUBLIC}/auth/social/github/login?link=true`);
    expect(landing.url.searchParams.get('linked')).toBe('true');
    const linked = await oneEvent(user.id, 'social.linked');
    expect(linked).toMatchObject({ user_id: user.id, actor: { id: user.id }, details: { provider: 'github', via: 'link' } });
    expect(linked.request_id).toEqual(expect.any(String));
    fromHere(linked);
    const id = rid();
    expect((await t.request('DELETE', '/auth/social/accounts/github', { session: token, headers: { 'X-Request-ID': id } })).status).toBe(200);
    const unlinked = await oneEvent(user.id, 'social.unlinked');
    expect(unlinked).toMatchObject({ user_id: user.id, actor: { id: user.id }, request_id: id, details: { provider: 'github' } });
    fromHere(unlinked);
    for (const e of [linked, unlinked]) await expectNoSecrets(e, [token]);
  });

  it('when a disabled user signs in with a linked provider, then sign_in.failed (disabled, social:github) and no session', async () => {
    const gh = fake();
    const first = await loginApi(servers.mint('github', gh), rid());
    const userId = first.body.user.id as string;
    await t.app.services.users.adminUpdate(null, userId, { disabled: true });
    const id = rid();
    const r = await loginApi(servers.mint('github', gh), id);
    expect(r.status).toBe(403);
    const e = await oneEvent(userId, 'sign_in.failed');
    expect(e).toMatchObject({
      outcome: 'failure',
      user_id: userId,
      actor: null,
      request_id: id,
      details: { method: 'social:github', reason: 'disabled', provider: 'github' },
    });
    fromHere(e);
  });

  it('when a provider address matches an account that is not verified, then SOCIAL_ACCOUNT_LINK_REQUIRED and sign_in.failed (link_required) on that account', async () => {
    const email = uniqueEmail('au-linkreq');
    const existing = await t.request('POST', '/auth/register', { body: { email, password: 'a-long-password-1' } });
    expect(existing.status, existing.text).toBeLessThan(300);
    const userId = (existing.body.user?.id ?? (await t.app.repos.users.findByEmail(email))!.id) as string;
    const id = rid();
    const r = await loginApi(servers.mint('github', fake({ email })), id);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('SOCIAL_ACCOUNT_LINK_REQUIRED');
    const e = await oneEvent(userId, 'sign_in.failed');
    expect(e).toMatchObject({
      user_id: userId,
      actor: null,
      request_id: id,
      details: { method: 'social:github', reason: 'link_required', provider: 'github' },
    });
  });

  it('when a provider shares no email address, then SOCIAL_EMAIL_MISSING and an anonymous sign_in.failed (no_email)', async () => {
    const id = rid();
    const r = await loginApi(servers.mint('github', fake({ email: null })), id);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('SOCIAL_EMAIL_MISSING');
    await expect.poll(async () => (await t.app.services.audit.list({ types: ['sign_in.failed'] })).events.filter((e) => e.request_id === id).length).toBe(1);
    const [e] = (await t.app.services.audit.list({ types: ['sign_in.failed'] })).events.filter((x) => x.request_id === id);
    expect(e).toMatchObject({ user_id: null, actor: null, details: { method: 'social:github', reason: 'no_email', provider: 'github' } });
  });
});
