import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/audit/audit-types.js';
import { BACKEND } from '../helpers/backend.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail, userServiceFailingRevocation } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** The events about a user, oldest first. */
async function eventsAbout(userId: string): Promise<AuditEvent[]> {
  return (await t.app.services.audit.list({ userId, limit: 200 })).events.reverse();
}
const as = (session: string, requestId = `req-${randomUUID()}`) => ({ session, headers: { 'X-Request-ID': requestId }, requestId });
const LOOPBACK = /^(::ffff:)?127\.0\.0\.1$|^::1$/;

describe(`account administration events (${BACKEND})`, () => {
  it('when an admin creates a user over HTTP, then user.created names the admin, the new user, the address and the request id', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    const req = as(admin.token);
    const email = uniqueEmail('created');
    const r = await t.request('POST', '/auth/admin/users', { ...req, body: { email, password: DEFAULT_PASSWORD, name: 'Nina', user_type: 'writer' } });
    expect(r.status).toBe(200);
    const id = r.body.data.user.id as string;
    const [e] = await eventsAbout(id);
    expect(e).toMatchObject({
      type: 'user.created',
      outcome: 'success',
      actor: { id: admin.user.id, user_type: 'admin' },
      user_id: id,
      request_id: req.requestId,
      details: { via: 'admin', user_type: 'writer' },
    });
    expect(e.ip).toMatch(LOOPBACK);
    expect(JSON.stringify(e)).not.toContain(email);
    expect(JSON.stringify(e)).not.toContain('Nina');
  });

  it('when someone registers publicly, then user.created says registration and the new user is its actor', async () => {
    const email = uniqueEmail('public');
    const r = await t.request('POST', '/auth/register/public', {
      body: { email, password: DEFAULT_PASSWORD, name: 'Pia' },
      headers: { 'X-Request-ID': 'req-public-1' },
    });
    expect(r.status).toBe(200);
    const user = (await t.app.repos.users.findByEmail(email))!;
    const events = await eventsAbout(user.id);
    expect(events.map((e) => e.type)).toContain('user.created');
    expect(events.find((e) => e.type === 'user.created')).toMatchObject({
      actor: { id: user.id, user_type: 'customer' },
      request_id: 'req-public-1',
      details: { via: 'registration', user_type: 'customer' },
    });
  });

  it('when a superadmin changes fields, the role, the address and the state, then each has its event and no value leaks into details', async () => {
    const admin = await makeSession(t, { user_type: 'superadmin' });
    const victim = await makeUser(t, { name: 'Old', phone: '+34600000001' });
    const newEmail = uniqueEmail('moved');
    const req = as(admin.token);
    const r = await t.request('PUT', `/auth/admin/users/${victim.id}`, {
      ...req,
      body: { name: 'Secretname', phone: '+34 611 222 333', user_type: 'writer', email: newEmail, disabled: true },
    });
    expect(r.status).toBe(200);
    const events = await eventsAbout(victim.id);
    expect(events.map((e) => e.type)).toEqual(['user.role_changed', 'email.changed', 'user.disabled', 'user.updated']);
    for (const e of events) {
      expect(e).toMatchObject({ actor: { id: admin.user.id, user_type: 'superadmin' }, user_id: victim.id, request_id: req.requestId });
      expect(e.ip).toMatch(LOOPBACK);
    }
    expect(events[0].details).toEqual({ from: 'customer', to: 'writer' });
    // The previous address, kept as the identifier (its own column, which an erasure clears) for the notice to the old inbox.
    expect(events[1].details).toEqual({ identifier: victim.email });
    expect(events[3].details).toEqual({ fields: ['name', 'phone'] });
    const stored = JSON.stringify(await t.app.sequelize.query(`SELECT details FROM audit_events WHERE user_id = '${victim.id}'`));
    for (const value of ['Secretname', '611', newEmail, victim.email, 'Old']) expect(stored).not.toContain(value);

    const again = await t.request('PUT', `/auth/admin/users/${victim.id}`, { session: admin.token, body: { disabled: false, name: 'Secretname' } });
    expect(again.status).toBe(200);
    // Enabling is its event; a field sent with the value it already has is no change.
    expect((await eventsAbout(victim.id)).slice(4).map((e) => e.type)).toEqual(['user.enabled']);
  });

  it('when a user updates their own profile, then user.updated has them as actor and only the names of the fields', async () => {
    const me = await makeSession(t, { name: 'Before' });
    const req = as(me.token);
    const r = await t.request('PUT', '/auth/user/me', { ...req, body: { name: 'Afterwards', lang: 'es' } });
    expect(r.status).toBe(200);
    const [e] = await eventsAbout(me.user.id);
    expect(e).toMatchObject({
      type: 'user.updated',
      actor: { id: me.user.id, user_type: 'customer' },
      user_id: me.user.id,
      request_id: req.requestId,
      details: { fields: ['lang', 'name'] },
    });
    expect(JSON.stringify(e)).not.toContain('Afterwards');
  });

  it('when a patch only touches bookkeeping or a column with its own flow, then no user.updated is written', async () => {
    const user = await makeUser(t, { is_verified: false });
    await t.app.services.users.patch(user.id, { first_time: false });
    await t.app.services.users.patch(user.id, { is_verified: true });
    await t.app.services.users.patch(user.id, { two_factor: false });
    expect(await eventsAbout(user.id)).toEqual([]);
    await t.app.services.users.patch(user.id, { title: 'Dr', first_time: true });
    expect((await eventsAbout(user.id)).map((e) => e.details)).toEqual([{ fields: ['title'] }]);
  });

  it('when an admin deletes a user, then user.deleted is written with no reason text', async () => {
    const admin = await makeSession(t, { user_type: 'superadmin' });
    const victim = await makeUser(t);
    const req = as(admin.token);
    const r = await t.request('DELETE', `/auth/admin/users/${victim.id}`, { ...req, body: { reason: 'private note about Carla' } });
    expect(r.status).toBe(200);
    const [e] = await eventsAbout(victim.id);
    expect(e).toMatchObject({
      type: 'user.deleted',
      actor: { id: admin.user.id, user_type: 'superadmin' },
      user_id: victim.id,
      request_id: req.requestId,
      details: {},
    });
    expect(JSON.stringify(e)).not.toContain('Carla');
  });

  it('when the session revocation of an admin change fails, then the change and its events roll back together', async () => {
    const admin = await makeUser(t, { user_type: 'admin' });
    // Only a superadmin changes a role.
    const boss = await makeUser(t, { user_type: 'superadmin' });
    const failing = userServiceFailingRevocation(t);
    for (const change of [
      (id: string) => failing.adminUpdate(admin, id, { disabled: true, name: 'Nope' }),
      (id: string) => failing.adminUpdate(boss, id, { user_type: 'writer' }),
      (id: string) => failing.adminUpdate(admin, id, { email: uniqueEmail('never') }),
      (id: string) => failing.softDelete(admin, id, null),
    ]) {
      const victim = await makeUser(t);
      await expect(change(victim.id)).rejects.toThrow('session store down');
      expect(await eventsAbout(victim.id)).toEqual([]);
    }
    // The same service, on a change that needs no revocation, commits its event.
    const victim = await makeUser(t);
    await failing.adminUpdate(admin, victim.id, { name: 'Fine' });
    expect((await eventsAbout(victim.id)).map((e) => e.type)).toEqual(['user.updated']);
  });
});
