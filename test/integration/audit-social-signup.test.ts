import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { uniqueEmail } from '../helpers/factories.js';
import { APPS, startOAuthServers, type FakeUser, type OAuthServers } from '../helpers/social-oauth-servers.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { accountsOf, socialEnv, usersWithEmail } from './social-helpers.js';

let servers: OAuthServers;
let t: TestApp;
let refuse = false;

beforeAll(async () => {
  servers = await startOAuthServers();
  t = await startTestApp({
    env: socialEnv({ discord: { client_id: APPS.discord.clientId, client_secret: APPS.discord.secret, endpoints: servers.endpoints('discord') } }),
  });
  // A failing step of the sign-up's unit of work after user.created was written (the webhook outbox's place).
  t.app.services.audit.onRecord(async (e) => {
    if (refuse && e.type === 'user.created') throw new Error('outbox down');
  });
});
afterAll(async () => {
  await t?.close();
  await servers?.close();
});

let seq = 0;
const fakeUser = (): FakeUser => ({ id: `audit-${++seq}-${Date.now()}`, email: uniqueEmail('social'), verified: true, name: 'Grace Hopper' });
const signIn = (u: FakeUser, requestId = 'req-social-signup') =>
  t.request('POST', '/auth/social/discord/login-api', { body: { accessToken: servers.mint('discord', u) }, headers: { 'X-Request-ID': requestId } });

describe(`social sign-up events (${BACKEND})`, () => {
  it('when a first social sign-in creates the user, then user.created says social and the provider, with the new user as actor', async () => {
    const u = fakeUser();
    expect((await signIn(u)).status).toBe(200);
    const user = (await t.app.repos.users.findByEmail(u.email!))!;
    const created = (await t.app.services.audit.list({ userId: user.id, types: ['user.created'] })).events;
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({
      actor: { id: user.id, user_type: 'customer' },
      user_id: user.id,
      request_id: 'req-social-signup',
      details: { via: 'social', provider: 'discord', user_type: 'customer' },
    });
    expect(created[0].ip).toMatch(/127\.0\.0\.1|::1/);
    expect(JSON.stringify(created[0])).not.toContain(u.email);
  });

  it('when the sign-up unit of work fails after user.created was written, then neither the user, the link nor the event remains', async () => {
    const u = fakeUser();
    refuse = true;
    try {
      expect((await signIn(u, 'req-social-rolled-back')).status).toBe(500);
    } finally {
      refuse = false;
    }
    expect(await usersWithEmail(t, u.email!)).toBe(0);
    expect(await accountsOf(t, { provider: 'discord', provider_user_id: u.id })).toEqual([]);
    const recent = (await t.app.services.audit.list({ types: ['user.created'], limit: 200 })).events;
    expect(recent.filter((e) => e.request_id === 'req-social-rolled-back')).toEqual([]);
  });
});
