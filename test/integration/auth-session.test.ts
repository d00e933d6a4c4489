import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthMode } from '../../src/http/define-route.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { startTestApp, TEST_BRIDGE_SECRET, type TestApp } from '../helpers/test-app.js';
import { makeSession, makeUser } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

async function pendingSession() {
  const user = await makeUser(t, { two_factor: true });
  const { token } = await t.app.services.sessions.create(user.id, { status: 'pending_2fa' });
  return { user, token };
}

describe('GET/POST /auth/validation', () => {
  it('when the session is full, then user, session and expiry come back in both spellings', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('GET', '/auth/validation', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, user: { id: user.id }, session: { two_factor_verified: true } });
    expect(r.body.expires_at).toBe(r.body.expiresAt);
    expect(r.body.session.expires_at).toBe(r.body.expiresAt);
    expect(r.body.session.id).not.toBe(token);
  });

  it('when the token arrives as query or cookie, then it is read from there', async () => {
    const { token } = await makeSession(t);
    expect((await t.request('GET', `/auth/validation?session_id=${token}`)).status).toBe(200);
    expect((await t.request('GET', '/auth/validation', { headers: { Cookie: `session_id=${token}` } })).status).toBe(200);
  });

  it('when the legacy client posts {sessionId} or {session_id}, then it is validated', async () => {
    const { user, token } = await makeSession(t);
    for (const body of [{ sessionId: token }, { session_id: token }]) {
      const r = await t.request('POST', '/auth/validation', { body });
      expect(r.status).toBe(200);
      expect(r.body.user.id).toBe(user.id);
    }
  });

  it('when the session is pending two-factor, then 200 with success:false and requires_2fa', async () => {
    const { user, token } = await pendingSession();
    const r = await t.request('GET', '/auth/validation', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: false, requires_2fa: true, sessionId: token, session_id: token, available_methods: [], user: { id: user.id } });
  });

  it('when the session is missing, unknown or revoked, then 401 "Invalid session"', async () => {
    const { token } = await makeSession(t);
    await t.app.services.sessions.revokeToken(token);
    for (const session of [undefined, 'ses_unknown', token]) {
      const r = await t.request('GET', '/auth/validation', { session });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ success: false, error: 'Invalid session' });
    }
  });

  it('when the session has expired, then 401 "Session expired"', async () => {
    const { user, token } = await makeSession(t);
    const [s] = await t.app.repos.sessions.listByUser(user.id);
    await t.app.repos.sessions.update(s.id, { expires_at: new Date(Date.now() - 1000) });
    const r = await t.request('GET', '/auth/validation', { session: token });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('Session expired');
  });

  it('when the POST body is not an object of strings, then 400', async () => {
    const r = await t.request('POST', '/auth/validation', { body: { sessionId: 42 } });
    expect(r.status).toBe(400);
  });
});

describe('POST /auth/refresh', () => {
  it('when a full session refreshes, then its expiry moves forward and the shape is login-compatible', async () => {
    const { user, token } = await makeSession(t);
    const [s] = await t.app.repos.sessions.listByUser(user.id);
    await t.app.repos.sessions.update(s.id, { expires_at: new Date(Date.now() + 3600_000) });
    const r = await t.request('POST', '/auth/refresh', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, user: { id: user.id }, sessionId: token, session_id: token });
    expect(new Date(r.body.expiresAt).getTime()).toBeGreaterThan(Date.now() + 6 * 86400_000);
  });

  it('when there is no session or a pending one, then 401', async () => {
    expect((await t.request('POST', '/auth/refresh')).status).toBe(401);
    const { token } = await pendingSession();
    const r = await t.request('POST', '/auth/refresh', { session: token });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('TWO_FACTOR_REQUIRED');
  });
});

describe('GET /auth/session/current and GET /auth/me', () => {
  it('when a cookie carries a full session, then session/current answers requires_2fa:false with the session', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('GET', '/auth/session/current', { headers: { Cookie: `session_id=${token}` } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, requires_2fa: false, sessionId: token, session_id: token, user: { id: user.id } });
    expect(r.body.expires_at).toBe(r.body.expiresAt);
  });

  it('when the session is pending, then session/current and /auth/me give the pending shape', async () => {
    const { token } = await pendingSession();
    for (const path of ['/auth/session/current', '/auth/me']) {
      const r = await t.request('GET', path, { session: token });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: false, requires_2fa: true, sessionId: token });
    }
  });

  it('when the session is missing or invalid, then both answer 401', async () => {
    for (const path of ['/auth/session/current', '/auth/me']) {
      expect((await t.request('GET', path)).status).toBe(401);
      expect((await t.request('GET', path, { session: 'ses_bad' })).status).toBe(401);
    }
  });

  it('when /auth/me is asked with a full session, then data.user is the public user', async () => {
    const { user, token } = await makeSession(t, { title: 'Dr' });
    const r = await t.request('GET', '/auth/me', { session: token });
    expect(r.body).toEqual({ success: true, data: { user: expect.objectContaining({ id: user.id, title: 'Dr' }) } });
    expect(r.body.data.user.password_hash).toBeUndefined();
  });
});

describe('POST /auth/invalidate/me', () => {
  it('when the row changed behind the cache, then invalidation drops the cached copy and returns fresh data', async () => {
    const { user, token } = await makeSession(t, { name: 'Before' });
    expect((await t.request('GET', '/auth/me', { session: token })).body.data.user.name).toBe('Before');
    await t.app.repos.users.update(user.id, { name: 'After' });
    expect((await t.request('GET', '/auth/me', { session: token })).body.data.user.name).toBe('Before');
    const r = await t.request('POST', '/auth/invalidate/me', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'User cache invalidated', data: { user: { name: 'After' } } });
    expect((await t.request('GET', '/auth/me', { session: token })).body.data.user.name).toBe('After');
  });

  it('when there is no session, then 401', async () => {
    expect((await t.request('POST', '/auth/invalidate/me')).status).toBe(401);
  });
});

describe('pending two-factor sessions', () => {
  const needsFullSession = (auth: AuthMode | ((c: never) => AuthMode)) => typeof auth === 'object' || auth === 'session' || auth === 'bridge+session';

  it('when a pending session (with the bridge secret) calls every core route that needs a full session, then each answers 401 TWO_FACTOR_REQUIRED', async () => {
    const user = await makeUser(t, { two_factor: true, user_type: 'superadmin' });
    const { token } = await t.app.services.sessions.create(user.id, { status: 'pending_2fa' });
    const routes = coreRoutes.filter((r) => needsFullSession(r.auth));
    expect(routes.length).toBeGreaterThan(20);
    for (const r of routes) {
      const path = r.path.replace(/:\w+/g, user.id);
      const res = await t.request(r.method.toUpperCase(), path, {
        session: token,
        headers: { 'X-Bridge-Secret': TEST_BRIDGE_SECRET },
        body: r.method === 'get' ? undefined : {},
      });
      expect(`${r.method} ${r.path} → ${res.status} ${res.body?.code}`).toBe(`${r.method} ${r.path} → 401 TWO_FACTOR_REQUIRED`);
    }
    // Still pending and still alive: the refusals did not end or promote it.
    const me = await t.request('GET', '/auth/me', { session: token });
    expect(me.body).toMatchObject({ success: false, requires_2fa: true });
  });
});
