import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { DEFAULT_PASSWORD, makeSession } from '../../test/helpers/factories.js';
import { startTestApp, type TestApp } from '../../test/helpers/test-app.js';

/** An event as core's record answers it (the module API exports no audit types; tests read core's list). */
type AuditEvent = Awaited<ReturnType<TestApp['app']['services']['audit']['list']>>['events'][number];

let t: TestApp;
let refuseCompletion = false;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.modules.hub.install(['privacy']);
  // A failing step of the erasure's unit of work after its event was written.
  t.app.services.audit.onRecord(async (e) => {
    if (refuseCompletion && e.type === 'privacy.erasure_completed') throw new Error('outbox down');
  });
});
afterAll(async () => {
  await t?.close();
});

async function privacyEvents(userId: string): Promise<AuditEvent[]> {
  return (await t.app.services.audit.list({ userId, types: ['privacy.*'], limit: 200 })).events.reverse();
}
const headers = (requestId: string) => ({ 'X-Request-ID': requestId });
const LOOPBACK = /127\.0\.0\.1|::1/;

describe(`privacy security events (${BACKEND})`, () => {
  it('when a user and then an admin export the data, then each export is recorded with its actor, address and request id', async () => {
    const user = await makeSession(t);
    const admin = await makeSession(t, { user_type: 'admin' });
    expect((await t.request('GET', '/auth/user/me/privacy/export', { session: user.token, headers: headers('req-export-self') })).status).toBe(200);
    const byAdmin = await t.request('GET', `/auth/admin/users/${user.user.id}/privacy/export`, { session: admin.token, headers: headers('req-export-admin') });
    expect(byAdmin.status).toBe(200);
    const events = await privacyEvents(user.user.id);
    expect(events.map((e) => [e.type, e.actor, e.user_id, e.request_id, e.details])).toEqual([
      ['privacy.export_requested', { id: user.user.id, user_type: 'customer' }, user.user.id, 'req-export-self', { by: 'self' }],
      ['privacy.export_requested', { id: admin.user.id, user_type: 'admin' }, user.user.id, 'req-export-admin', { by: 'admin' }],
    ]);
    for (const e of events) expect(e.ip).toMatch(LOOPBACK);
  });

  it('when a user erases their account, then the request and the completed erasure are recorded, without personal data', async () => {
    const user = await makeSession(t, { name: 'Erasable' });
    const r = await t.request('POST', '/auth/user/me/privacy/delete', {
      session: user.token,
      headers: headers('req-erase-self'),
      body: { confirm: true, password: DEFAULT_PASSWORD },
    });
    expect(r.status).toBe(200);
    const events = await privacyEvents(user.user.id);
    expect(events.map((e) => [e.type, e.actor, e.request_id])).toEqual([
      ['privacy.erasure_requested', { id: user.user.id, user_type: 'customer' }, 'req-erase-self'],
      ['privacy.erasure_completed', { id: user.user.id, user_type: 'customer' }, 'req-erase-self'],
    ]);
    expect(events[0].details).toEqual({ by: 'self' });
    expect(events[1].details).toEqual({ by: 'self', modules: expect.arrayContaining(['core', 'privacy']) });
    const stored = JSON.stringify(events);
    for (const v of [user.user.email, 'Erasable', DEFAULT_PASSWORD]) expect(stored).not.toContain(v);
    // Their address and agent go from every event about them, the erasure's own completion included.
    for (const e of events) expect([e.ip, e.user_agent]).toEqual([null, null]);
  });

  it('when an erasure fails after its completion was written, then the account stays, the request is on record and no completion is', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    const user = await makeSession(t);
    refuseCompletion = true;
    try {
      const r = await t.request('POST', `/auth/admin/users/${user.user.id}/privacy/delete`, {
        session: admin.token,
        headers: headers('req-erase-fails'),
        body: { confirm: true },
      });
      expect(r.status).toBe(500);
    } finally {
      refuseCompletion = false;
    }
    expect(await t.app.repos.users.findById(user.user.id)).toMatchObject({ email: user.user.email, deleted_at: null });
    const events = await privacyEvents(user.user.id);
    expect(events.map((e) => [e.type, e.actor, e.details])).toEqual([
      ['privacy.erasure_requested', { id: admin.user.id, user_type: 'admin' }, { by: 'admin' }],
    ]);
  });
});
