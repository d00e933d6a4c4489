import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail, userServiceFailingRevocation } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/* A change that fails after its write (a module's hook throws, the session store is down) is never half-applied against the user. */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('after-event hooks cannot half-fail a change', () => {
  const boom = () => {
    throw new Error('module bug');
  };

  it('when an auth.registered handler throws, then registration still answers 200 with a working session and a retry is 400 EMAIL_TAKEN', async () => {
    const off = t.app.hooks.on('auth.registered', boom);
    try {
      const email = uniqueEmail('hook-reg');
      const r = await t.request('POST', '/auth/register/public', { body: { email, password: DEFAULT_PASSWORD } });
      expect(r.status).toBe(200);
      expect(r.body.data.user.email).toBe(email);
      expect((await t.request('GET', '/auth/me', { session: r.body.data.sessionId })).status).toBe(200);
      const again = await t.request('POST', '/auth/register/public', { body: { email, password: DEFAULT_PASSWORD } });
      expect(again.status).toBe(400);
      expect(again.body.code).toBe('EMAIL_TAKEN');
    } finally {
      off();
    }
  });

  it('when an auth.login handler throws, then the login still answers 200 with its session', async () => {
    const user = await makeUser(t);
    const off = t.app.hooks.on('auth.login', boom);
    try {
      const r = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
      expect(r.status).toBe(200);
      expect((await t.request('GET', '/auth/me', { session: r.body.sessionId })).status).toBe(200);
    } finally {
      off();
    }
  });

  it('when a user.updated handler throws, then an admin disabling a user answers 200 and the user is locked out', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    const victim = await makeSession(t);
    const off = t.app.hooks.on('user.updated', boom);
    try {
      const r = await t.request('PUT', `/auth/admin/users/${victim.user.id}`, { session: admin.token, body: { disabled: true } });
      expect(r.status).toBe(200);
    } finally {
      off();
    }
    expect((await t.request('GET', '/auth/me', { session: victim.token })).status).toBe(401);
  });
});

describe('a change cannot fail half-way', () => {
  // Disabling or deleting and the sign-out everywhere are one unit of work (as a password change is):
  // a failing revocation leaves nothing half done, and the admin is told (admin-users-unit-of-work.test.ts).
  it('when revoking the sessions fails while an admin disables or deletes a user, then the change rolls back whole and the admin is told', async () => {
    const admin = await makeUser(t, { user_type: 'admin' });
    const sessions = t.app.services.sessions;
    const failing = userServiceFailingRevocation(t);
    for (const action of ['disable', 'delete'] as const) {
      const victim = await makeSession(t);
      expect((await sessions.validate(victim.token)).user.id).toBe(victim.user.id);
      const change = action === 'disable' ? failing.adminUpdate(admin, victim.user.id, { disabled: true }) : failing.softDelete(admin, victim.user.id);
      await expect(change).rejects.toThrow('session store down');
      expect(await t.app.repos.users.findById(victim.user.id), action).toMatchObject({ disabled_at: null, deleted_at: null });
    }
  });
});
