import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withAuditScope } from '../../src/audit/audit-scope.js';
import { makeUser } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const audit = () => t.app.services.audit;

describe('the security-event record', () => {
  it('when a change rolls back, then its event is gone with it; when it commits, then its event is there', async () => {
    const user = await makeUser(t);
    await expect(
      t.app.sequelize.transaction(async (tx) => {
        await audit().record({ type: 'user.updated', userId: user.id, details: { fields: ['name'] } }, { tx });
        throw new Error('change failed');
      }),
    ).rejects.toThrow('change failed');
    expect((await audit().list({ userId: user.id })).events).toEqual([]);
    await t.app.sequelize.transaction((tx) => audit().record({ type: 'user.updated', userId: user.id, details: { fields: ['name'] } }, { tx }));
    const { events } = await audit().list({ userId: user.id });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'user.updated', outcome: 'success', user_id: user.id, actor: null, details: { fields: ['name'] } });
    expect(new Date(events[0].at).toISOString()).toBe(events[0].at);
  });

  it('when written inside a scope, then actor, ip, agent and request id come from it, and secret-looking keys never reach the row', async () => {
    const user = await makeUser(t);
    const scope = { actor: { id: user.id, user_type: 'user' }, ip: '203.0.113.9', userAgent: 'Test/1.0', requestId: 'req-abc' };
    await withAuditScope(scope, () =>
      audit().record({
        type: 'password.changed',
        userId: user.id,
        details: {
          password: 'x',
          new_token: 't',
          session_id: 's',
          nested: { secret: 'y', ok: 1 },
          newPassword: 'x',
          accessToken: 't',
          apiKey: 'y',
          kept: true,
        },
      }),
    );
    const [e] = (await audit().list({ userId: user.id })).events;
    expect(e).toMatchObject({ actor: { id: user.id, user_type: 'user' }, ip: '203.0.113.9', user_agent: 'Test/1.0', request_id: 'req-abc' });
    expect(e.details).toEqual({ nested: { ok: 1 }, kept: true });
    const [raw] = await t.app.sequelize.query(`SELECT details FROM audit_events WHERE id = '${e.id}'`);
    expect(JSON.stringify(raw)).not.toMatch(/"x"|"t"|"s"|"y"/);
  });

  it('when a type nobody declared is written, then it throws and writes nothing', async () => {
    await expect(audit().record({ type: 'made.up' })).rejects.toThrow(/not declared/);
  });

  it('when more events than a page exist, then pages are newest first and the cursor walks them without gaps or repeats', async () => {
    const user = await makeUser(t);
    for (let i = 0; i < 7; i++) await audit().record({ type: i % 2 ? 'sign_in.failed' : 'sign_in.succeeded', userId: user.id, details: { i } });
    const seen: number[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await audit().list({ userId: user.id, limit: 3, cursor });
      seen.push(...page.events.map((e) => e.details.i as number));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(seen).toEqual([6, 5, 4, 3, 2, 1, 0]);
    const failed = await audit().list({ userId: user.id, types: ['sign_in.failed'] });
    expect(failed.events.map((e) => e.details.i)).toEqual([5, 3, 1]);
    const family = await audit().list({ userId: user.id, types: ['sign_in.*'] });
    expect(family.events).toHaveLength(7);
    await expect(audit().list({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ status: 400 });
  });

  it('when an unknown account is tried, then the identifier is kept apart and erasure removes it with the address', async () => {
    const user = await makeUser(t);
    await withAuditScope({ actor: null, ip: '198.51.100.7', userAgent: 'UA', requestId: null }, async () => {
      await audit().record({ type: 'sign_in.failed', outcome: 'failure', userId: null, details: { reason: 'unknown_account', identifier: user.email } });
      await audit().record({ type: 'sign_in.succeeded', userId: user.id, details: { method: 'password' } });
    });
    const before = await audit().list({ ip: '198.51.100.7' });
    expect(before.events.map((e) => e.details.identifier ?? null)).toEqual([null, user.email]);
    expect(await audit().anonymize(user.id, [user.email])).toBe(2);
    expect(await audit().anonymize(user.id, [user.email])).toBe(0);
    const after = await audit().list({ types: ['sign_in.*'], limit: 200 });
    const mine = after.events.filter((e) => e.id === before.events[0].id || e.id === before.events[1].id);
    expect(mine).toHaveLength(2);
    for (const e of mine) expect([e.ip, e.user_agent, e.details.identifier ?? null]).toEqual([null, null, null]);
  });
});
