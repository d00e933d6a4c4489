import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeSession, userServiceFailingRevocation } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const NEW_PASSWORD = 'Another-Horse-77';
const login = (email: string, password: string) => t.request('POST', '/auth/login', { body: { email, password } });

describe('a password change is one unit of work', () => {
  it('when revoking the other sessions fails, then the whole change rolls back: old password and sessions as before', async () => {
    const { user, token } = await makeSession(t);
    const before = (await t.app.repos.users.findById(user.id))!;
    const sessions = t.app.services.sessions;
    const failing = userServiceFailingRevocation(t);
    await expect(failing.setPassword(user.id, NEW_PASSWORD)).rejects.toThrow('session store down');
    const stored = await t.app.repos.users.findById(user.id);
    expect(stored!.password_hash).toBe(before.password_hash);
    expect(String(stored!.password_changed_at)).toBe(String(before.password_changed_at));
    expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(200);
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(401);
    expect((await sessions.validate(token)).user.id).toBe(user.id);
  });

  it('when a change was cut short after the password was written, then sessions opened before it are refused', async () => {
    const { user, token: attacker } = await makeSession(t);
    expect((await t.request('GET', '/auth/validation', { session: attacker })).status).toBe(200);
    // What a change interrupted between the password write and the revocation leaves: the row says
    // the password changed, the attacker's session row is still there.
    const later = new Date(Date.now() + 5);
    await t.app.repos.users.update(user.id, { password_hash: await t.app.services.passwords.hash(NEW_PASSWORD), password_changed_at: later });
    await t.app.services.sessions.invalidateUser(user.id);
    // A fixed wait, not a poll: the clock passes password_changed_at, as it has after a real change.
    await new Promise((r) => setTimeout(r, 10));
    expect((await t.app.services.sessions.listForUser(user.id)).length).toBe(1);
    const r = await t.request('GET', '/auth/validation', { session: attacker });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('INVALID_SESSION');
    expect(await t.app.services.sessions.liveSessionId(attacker)).toBeNull();
    // A session opened with the new password works.
    const fresh = await login(user.email, NEW_PASSWORD);
    expect(fresh.status).toBe(200);
    expect((await t.request('GET', '/auth/validation', { session: fresh.body.sessionId })).status).toBe(200);
  });

  it('when the owner changes the password, then their own session lives on and every other one ends', async () => {
    const { user, token: mine } = await makeSession(t);
    const other = await t.app.services.sessions.create(user.id, {});
    const me = await t.app.services.sessions.validate(mine);
    await t.app.services.users.setPassword(user.id, NEW_PASSWORD, { exceptSessionId: me.session.id });
    expect((await t.request('GET', '/auth/validation', { session: mine })).status).toBe(200);
    expect((await t.request('GET', '/auth/validation', { session: other.token })).status).toBe(401);
    expect((await t.app.services.sessions.listForUser(user.id)).map((s) => s.id)).toEqual([me.session.id]);
  });
});
