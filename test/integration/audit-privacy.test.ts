import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withAuditScope, type AuditScope } from '../../src/audit/audit-scope.js';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { eraseAccount, exportAccount } from '../../src/services/account-data.js';
import { makeUser } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const scope = (actor: UserRecord | null, ip: string): AuditScope => ({
  actor: actor ? { id: actor.id, user_type: actor.user_type } : null,
  ip,
  userAgent: `Agent of ${ip}`,
  requestId: `req-${ip}`,
});

/** A user with a history: their sign-in, an admin's reset, a failed try on their email as an unknown account, and an action they took on someone else. */
async function history() {
  const user = await makeUser(t, { phone: '+34 600 111 222' } as Partial<UserRecord>);
  const admin = await makeUser(t, { user_type: 'admin' });
  const other = await makeUser(t);
  const audit = t.app.services.audit;
  await withAuditScope(scope(user, '203.0.113.10'), () => audit.record({ type: 'sign_in.succeeded', userId: user.id, details: { method: 'password' } }));
  await withAuditScope(scope(admin, '198.51.100.20'), () => audit.record({ type: 'two_factor.reset', userId: user.id, details: { by_user_id: admin.id } }));
  await withAuditScope(scope(null, '203.0.113.11'), () =>
    audit.record({ type: 'sign_in.failed', outcome: 'failure', userId: null, details: { reason: 'unknown_account', identifier: user.email } }),
  );
  await withAuditScope(scope(user, '203.0.113.12'), () => audit.record({ type: 'user.updated', userId: other.id, details: { fields: ['name'] } }));
  await withAuditScope(scope(other, '203.0.113.13'), () => audit.record({ type: 'sign_in.succeeded', userId: other.id }));
  return { user, admin, other };
}

const rows = async () => (await t.app.services.audit.list({ limit: 200 })).events;

describe('security events in the personal-data export and erasure', () => {
  it("when a user's data is exported, then core.security_events holds the events about them, oldest first, without another person's id or address", async () => {
    const { user, admin, other } = await history();
    const data = await exportAccount(t.app, user.id);
    const events = data.core.security_events;
    expect(events.map((e) => e.type)).toEqual(['sign_in.succeeded', 'two_factor.reset']);
    expect(events[0]).toMatchObject({ user_id: user.id, actor: { id: user.id }, ip: '203.0.113.10', user_agent: 'Agent of 203.0.113.10' });
    expect(events[1]).toMatchObject({ actor: { user_type: 'admin' }, ip: null, user_agent: null, details: {} });
    const text = JSON.stringify(data);
    expect(text).not.toContain(admin.id);
    expect(text).not.toContain('198.51.100.20');
    expect(text).not.toContain(other.id);
  });

  it('when a user is erased, then their events stay but the addresses, agents and identifiers naming them are gone; nobody else is touched', async () => {
    const { user, other } = await history();
    const before = await rows();
    const naming = before.filter((e) => e.user_id === user.id || (e.actor && 'id' in e.actor && e.actor.id === user.id) || e.details.identifier === user.email);
    expect(naming.map((e) => e.type).sort()).toEqual(['sign_in.failed', 'sign_in.succeeded', 'two_factor.reset', 'user.updated']);
    await eraseAccount(t.app, user.id, 'test erasure');
    const after = await rows();
    for (const { id } of naming) {
      const e = after.find((x) => x.id === id);
      expect(e, 'the event stays').toBeDefined();
      expect(e).toMatchObject({ ip: null, user_agent: null });
      expect(e!.details.identifier).toBeUndefined();
    }
    // Kept: what happened and when, and the events about someone else by someone else.
    expect(after.filter((e) => e.user_id === user.id).map((e) => e.type)).toEqual(['two_factor.reset', 'sign_in.succeeded']);
    const theirs = after.find((e) => e.user_id === other.id && e.type === 'sign_in.succeeded')!;
    expect(theirs).toMatchObject({ ip: '203.0.113.13', user_agent: 'Agent of 203.0.113.13' });
    expect(JSON.stringify(after)).not.toContain(user.email);
  });

  it('when the erasure rolls back, then the events keep their addresses (the change is in the erasure transaction)', async () => {
    const { user } = await history();
    await expect(
      eraseAccount(t.app, user.id, 'test erasure', async () => {
        throw new Error('proof could not be written');
      }),
    ).rejects.toThrow('proof could not be written');
    const own = (await t.app.services.audit.list({ userId: user.id })).events;
    expect(own.find((e) => e.type === 'sign_in.succeeded')).toMatchObject({ ip: '203.0.113.10' });
    expect((await t.app.services.audit.list({ ip: '203.0.113.11' })).events.some((e) => e.details.identifier === user.email)).toBe(true);
  });
});
