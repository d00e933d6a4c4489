import { beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../test/helpers/test-app.js';
import { assert, type SoftCredential } from './test/authenticator.js';
import { ORIGIN, rowsOf, signInWith, useApp, userWithPasskey } from './test/world.js';

/**
 * Passkeys and the second factor: a user-verified passkey is two factors; a passkey finishes a pending
 * sign-in as a two-factor method (through the two-factor module's events); failed assertions count in
 * core's per-account failed-sign-in budget.
 */
const app = useApp();
const TF = '/auth/two_factor';

beforeAll(async () => {
  await app().app.modules.hub.install(['two-factor']);
});

const signInEvents = async (t: TestApp, userId: string) => (await t.app.services.audit.list({ userId, types: ['sign_in.succeeded'] })).events;

/** A pending session of a two-factor user (signed in with a passkey without user verification). */
async function pendingWith(t: TestApp, credential: SoftCredential) {
  const { r } = await signInWith(t, credential, { uv: false });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ success: false, requires_2fa: true });
  return r.body.session_id as string;
}

/** Options for the second step, then an assertion over them. */
async function secondStep(t: TestApp, token: string, credential: SoftCredential, c: Parameters<typeof assert>[2] = { origin: ORIGIN }) {
  const o = await t.request('POST', `${TF}/passkey/start`, { session: token, body: {} });
  expect(o.status, JSON.stringify(o.body)).toBe(200);
  return { options: o.body.options, assertion: assert(credential, o.body.options, c) };
}

describe('passkeys: user verification counts as two factors', () => {
  it('when a two-factor user signs in with a user-verified passkey, then the session is full, two-factor verified, and the event says passkey with uv', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t, { two_factor: true });
    const { r } = await signInWith(t, credential, { uv: true });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, user: { id: user.id } });
    expect(r.body.requires_2fa).toBeFalsy();
    expect((await t.request('GET', '/auth/user/me', { session: r.body.session_id, bridge: true })).status).toBe(200);
    const sessions = await rowsOf(t, 'sessions', user.id);
    const opened = sessions.find((s) => s.status === 'active' && Boolean(s.two_factor_verified));
    expect(opened).toBeDefined();
    const events = await signInEvents(t, user.id);
    expect(events.map((e) => e.details)).toEqual([{ method: 'passkey', uv: true, factors: 2, amr: ['hwk', 'user', 'mfa'] }]);
  });

  it('when a two-factor user signs in without user verification, then the session is pending and offers the passkey among its methods', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t, { two_factor: true });
    const { r } = await signInWith(t, credential, { uv: false });
    expect(r.body).toMatchObject({ success: false, requires_2fa: true });
    expect(JSON.stringify(r.body)).toContain('"type":"passkey"');
    expect(await signInEvents(t, user.id)).toHaveLength(0);
  });

  it('when a user without two-factor signs in without user verification, then the session is full but not marked two-factor verified', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t);
    const { r } = await signInWith(t, credential, { uv: false });
    expect(r.body.success).toBe(true);
    const sessions = await rowsOf(t, 'sessions', user.id);
    expect(sessions.filter((s) => s.status === 'active')).toHaveLength(2);
    expect(sessions.filter((s) => Boolean(s.two_factor_verified))).toHaveLength(0);
    expect((await signInEvents(t, user.id)).map((e) => e.details)).toEqual([{ method: 'passkey', uv: false, amr: ['hwk'] }]);
  });

  it('when a module that does not declare provesTwoFactors signs in with factors 2, then core refuses and opens nothing', async () => {
    const t = app();
    const { user } = await userWithPasskey(t, { two_factor: true });
    const ctx = t.app.modules.context('two-factor');
    await expect(ctx.signIn(user, 'two-factor', {}, { factors: 2 })).rejects.toThrow(/provesTwoFactors/);
    expect((await rowsOf(t, 'sessions', user.id)).filter((s) => s.status === 'active')).toHaveLength(1); // makeSession's
  });
});

describe('passkeys: a passkey as a second-factor method', () => {
  it('when a pending session lists methods, starts the passkey step and verifies, then the same session id becomes full', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t, { two_factor: true });
    const token = await pendingWith(t, credential);
    const m = await t.request('GET', `${TF}/methods`, { session: token });
    expect(m.status, JSON.stringify(m.body)).toBe(200);
    const pk = m.body.methods.find((x: { type: string }) => x.type === 'passkey');
    expect(pk).toMatchObject({ id: 'passkey', method: 'passkey', status: 'active' });
    const { options, assertion } = await secondStep(t, token, credential);
    expect(options.allowCredentials.map((c: { id: string }) => c.id)).toEqual([credential.id]);
    const v = await t.request('POST', `${TF}/verify`, { session: token, body: { method_id: pk.id, credential: assertion, action: 'login' } });
    expect(v.status, JSON.stringify(v.body)).toBe(200);
    expect(v.body).toMatchObject({ success: true, session_activated: true, requires_2fa: false, method: 'passkey', method_id: 'passkey', session_id: token });
    expect((await t.request('GET', '/auth/user/me', { session: token, bridge: true })).status).toBe(200);
    expect((await signInEvents(t, user.id)).map((e) => e.details.method)).toEqual(['two_factor']);
  });

  it('when a user has no passkey, then it is not listed and its start is refused', async () => {
    const t = app();
    const { credential } = await userWithPasskey(t, { two_factor: true });
    const { makeSession, uniqueEmail } = await import('./test/world.js');
    const other = await makeSession(t, { email: uniqueEmail('nopk') });
    const listed = await t.request('GET', `${TF}/methods`, { session: other.token });
    expect(JSON.stringify(listed.body)).not.toContain('"passkey"');
    // A full session has no second step to start.
    expect((await t.request('POST', `${TF}/passkey/start`, { session: other.token, body: {} })).status).toBe(400);
    void credential;
  });

  it("when the second step is answered with another user's passkey, a replayed or a sign-in challenge, then each is 400 PASSKEY_INVALID and the session stays pending", async () => {
    const t = app();
    const a = await userWithPasskey(t, { two_factor: true });
    const b = await userWithPasskey(t);
    const token = await pendingWith(t, a.credential);
    const verify = (credential: unknown) => t.request('POST', `${TF}/verify`, { session: token, body: { method_id: 'passkey', credential, action: 'login' } });
    const refused = (r: { status: number; body: { code?: string } }) => {
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.code).toBe('PASSKEY_INVALID');
    };
    // b's passkey over a's challenge.
    refused(await verify((await secondStep(t, token, b.credential)).assertion));
    // A sign-in challenge (not bound to the user nor to this step).
    const login = await t.request('POST', '/auth/passkeys/login/options', { body: {} });
    refused(await verify(assert(a.credential, login.body.options, { origin: ORIGIN })));
    // The wrong origin, then a good one replayed after its use.
    refused(await verify((await secondStep(t, token, a.credential, { origin: 'https://evil.example' })).assertion));
    const good = (await secondStep(t, token, a.credential)).assertion;
    expect((await verify(good)).status).toBe(200);
    const again = await userWithPasskey(t, { two_factor: true });
    const token2 = await pendingWith(t, again.credential);
    const replay = await t.request('POST', `${TF}/verify`, { session: token2, body: { method_id: 'passkey', credential: good, action: 'login' } });
    refused(replay);
    // Still pending: a full session's route refuses it.
    expect((await t.request('GET', '/auth/passkeys', { session: token2 })).status).not.toBe(200);
    await expect
      .poll(async () => (await t.app.services.audit.list({ userId: a.user.id, types: ['sign_in.failed'] })).events.map((e) => e.details.second_factor), {
        timeout: 5000,
      })
      .toEqual(['passkey', 'passkey', 'passkey']);
  });

  it('when another pending session of the same user answers with a challenge started by the first, then it is refused', async () => {
    const t = app();
    const { credential } = await userWithPasskey(t, { two_factor: true });
    const first = await pendingWith(t, credential);
    const second = await pendingWith(t, credential);
    const { assertion } = await secondStep(t, first, credential);
    const r = await t.request('POST', `${TF}/verify`, { session: second, body: { method_id: 'passkey', credential: assertion } });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.code).toBe('PASSKEY_INVALID');
  });

  it('when the passkey step is asked with a code-only body or for an action other than login, then it is refused with the module’s codes', async () => {
    const t = app();
    const { credential } = await userWithPasskey(t, { two_factor: true });
    const token = await pendingWith(t, credential);
    const { assertion } = await secondStep(t, token, credential);
    const remove = await t.request('POST', `${TF}/verify`, { session: token, body: { method_id: 'passkey', credential: assertion, action: 'remove' } });
    expect(remove.status).toBe(403);
    expect(remove.body.code).toBe('TWO_FACTOR_REQUIRED');
    const unknown = await t.request('POST', `${TF}/verify`, { session: token, body: { method_id: 'nope', credential: assertion } });
    expect(unknown.status).toBe(404);
    const bad = await t.request('POST', `${TF}/verify`, { session: token, body: { method: 'passkey', code: '123456' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });

  it('when wrong passkey answers exhaust the user’s budget of wrong codes, then the step answers 429', async () => {
    const t = app();
    const { credential } = await userWithPasskey(t, { two_factor: true });
    const token = await pendingWith(t, credential);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const { assertion } = await secondStep(t, token, credential, { origin: ORIGIN, badSignature: true });
      statuses.push((await t.request('POST', `${TF}/verify`, { session: token, body: { method_id: 'passkey', credential: assertion } })).status);
    }
    expect(statuses.slice(0, 5)).toEqual([400, 400, 400, 400, 400]);
    expect(statuses[5]).toBe(429);
  });
});

describe('passkeys: failed assertions count toward the per-account failed-sign-in budget', () => {
  it('when passkey sign-ins of an account fail again and again, then its password login and passkey sign-in back off (429)', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t, { password: 'Correct-Horse-9' });
    for (let i = 0; i < 5; i++) expect((await signInWith(t, credential, { badSignature: true })).r.status).toBe(400);
    const login = await t.request('POST', '/auth/login', { body: { email: user.email, password: 'Correct-Horse-9' } });
    expect(login.status, JSON.stringify(login.body)).toBe(429);
    const { r } = await signInWith(t, credential);
    expect(r.status).toBe(429);
    expect(r.body.code).toBe('RATE_LIMITED');
  });
});

describe('passkeys: the second step fails closed', () => {
  it('when the passkeys module is switched off mid-sign-in, then the passkey is no longer offered and its answer is refused', async () => {
    const t = app();
    const { credential } = await userWithPasskey(t, { two_factor: true });
    const token = await pendingWith(t, credential);
    const { assertion } = await secondStep(t, token, credential);
    await t.app.modules.hub.disable('passkeys');
    try {
      const listed = await t.request('GET', `${TF}/methods`, { session: token });
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain('"passkey"');
      const r = await t.request('POST', `${TF}/verify`, { session: token, body: { method_id: 'passkey', credential: assertion } });
      expect(r.status, JSON.stringify(r.body)).toBe(404);
      expect((await t.request('POST', `${TF}/passkey/start`, { session: token, body: {} })).status).toBe(400);
      expect((await t.request('GET', '/auth/two_factor/trusted_devices', { session: token })).status).not.toBe(200);
    } finally {
      await t.app.modules.hub.enable('passkeys');
    }
  });
});
