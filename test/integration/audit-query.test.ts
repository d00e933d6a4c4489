import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withAuditScope, type AuditScope } from '../../src/audit/audit-scope.js';
import type { AuditInput } from '../../src/audit/audit-types.js';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { eventAt, idAt } from '../helpers/audit-events.js';
import { makeSession, makeUser } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
let admin: { user: UserRecord; token: string };
beforeAll(async () => {
  t = await startTestApp();
  admin = await makeSession(t, { user_type: 'admin' });
});
afterAll(async () => {
  await t?.close();
});

const scopeOf = (actor: UserRecord | null, ip: string, requestId = 'req-test'): AuditScope => ({
  actor: actor ? { id: actor.id, user_type: actor.user_type } : null,
  ip,
  userAgent: 'AuditTest/1.0',
  requestId,
});
const record = (scope: AuditScope, input: AuditInput) => withAuditScope(scope, () => t.app.services.audit.record(input));

/** An event written as if it happened `daysAgo` days ago. */
async function recordAt(daysAgo: number, input: { type: string; userId: string; ip: string }) {
  const at = new Date(Date.now() - daysAgo * 86_400_000);
  await t.app.repos.audit.insert(eventAt(at, { type: input.type, user_id: input.userId, ip: input.ip }));
}

const adminGet = (qs: string, token = admin.token) => t.request('GET', `/auth/admin/audit-events${qs ? `?${qs}` : ''}`, { session: token });

describe('GET /auth/admin/audit-events', () => {
  it('when filtered by user, actor, type, family, outcome, ip and time, then each filter answers exactly its events, newest first', async () => {
    const user = await makeUser(t);
    const other = await makeUser(t);
    const ip = '203.0.113.41';
    await record(scopeOf(user, ip, 'req-1'), {
      type: 'sign_in.succeeded',
      userId: user.id,
      actor: { id: user.id, user_type: 'customer' },
      details: { method: 'password' },
    });
    await record(scopeOf(null, ip), { type: 'sign_in.failed', outcome: 'failure', userId: user.id, details: { reason: 'bad_password' } });
    await record(scopeOf(admin.user, '198.51.100.2'), { type: 'two_factor.reset', userId: user.id });
    await record(scopeOf(other, ip), { type: 'password.changed', userId: other.id });

    const byUser = await adminGet(`user_id=${user.id}`);
    expect(byUser.status).toBe(200);
    expect(byUser.body.success).toBe(true);
    expect(byUser.body.data.events.map((e: { type: string }) => e.type)).toEqual(['two_factor.reset', 'sign_in.failed', 'sign_in.succeeded']);
    expect(byUser.body.data.next_cursor).toBeNull();
    const signIn = byUser.body.data.events[2];
    expect(signIn).toMatchObject({
      actor: { id: user.id, user_type: 'customer' },
      user_id: user.id,
      ip,
      user_agent: 'AuditTest/1.0',
      request_id: 'req-1',
      outcome: 'success',
      details: { method: 'password' },
    });

    const byActor = await adminGet(`actor_id=${admin.user.id}&user_id=${user.id}`);
    expect(byActor.body.data.events.map((e: { type: string }) => e.type)).toEqual(['two_factor.reset']);
    const byType = await adminGet(`type=sign_in.failed,password.changed&ip=${ip}`);
    expect(byType.body.data.events.map((e: { type: string }) => e.type)).toEqual(['password.changed', 'sign_in.failed']);
    const byFamily = await adminGet(`type=sign_in.*&user_id=${user.id}`);
    expect(byFamily.body.data.events.map((e: { type: string }) => e.type)).toEqual(['sign_in.failed', 'sign_in.succeeded']);
    const failures = await adminGet(`outcome=failure&user_id=${user.id}`);
    expect(failures.body.data.events.map((e: { type: string }) => e.type)).toEqual(['sign_in.failed']);
    // The address as the client spells it (IPv4-mapped IPv6) finds the stored canonical form.
    const byIp = await adminGet(`ip=${encodeURIComponent(`::ffff:${ip}`)}`);
    expect(byIp.body.data.events).toHaveLength(3);
  });

  it('when since and until bound the window, then only events inside it answer', async () => {
    const user = await makeUser(t);
    const ip = '203.0.113.42';
    for (const daysAgo of [40, 20, 10, 1]) await recordAt(daysAgo, { type: 'sign_out', userId: user.id, ip });
    const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
    const r = await adminGet(`user_id=${user.id}&since=${encodeURIComponent(day(30))}&until=${encodeURIComponent(day(5))}`);
    expect(r.status).toBe(200);
    const ages = r.body.data.events.map((e: { at: string }) => Math.round((Date.now() - Date.parse(e.at)) / 86_400_000));
    expect(ages).toEqual([10, 20]);
    const sinceDate = await adminGet(`user_id=${user.id}&since=${day(15).slice(0, 10)}`);
    expect(sinceDate.body.data.events.length).toBeGreaterThanOrEqual(2);
    expect(sinceDate.body.data.events.length).toBeLessThanOrEqual(3);
  });

  it('when an id runs ahead of its time (many events in one millisecond), then the window still finds the event by its time', async () => {
    const user = await makeUser(t);
    const at = new Date(Date.now() - 3 * 86_400_000);
    await t.app.repos.audit.insert({ ...eventAt(at, { type: 'two_factor.enabled', user_id: user.id }), id: idAt(at.getTime() + 30_000) });
    const until = encodeURIComponent(new Date(at.getTime() + 1).toISOString());
    const r = await adminGet(`type=two_factor.*&since=${encodeURIComponent(at.toISOString())}&until=${until}`);
    expect(r.body.data.events.map((e: { user_id: string }) => e.user_id)).toEqual([user.id]);
    const after = await adminGet(`user_id=${user.id}&since=${until}`);
    expect(after.body.data.events).toEqual([]);
  });

  it('when more events than the limit exist, then the keyset cursor walks every page once, and the default page is 50', async () => {
    const user = await makeUser(t);
    for (let i = 0; i < 55; i++) await record(scopeOf(null, '203.0.113.43'), { type: 'sign_in.failed', outcome: 'failure', userId: user.id, details: { i } });
    const first = await adminGet(`user_id=${user.id}`);
    expect(first.body.data.events).toHaveLength(50);
    expect(typeof first.body.data.next_cursor).toBe('string');
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { events: { details: { i: number } }[]; next_cursor: string | null } } } = await adminGet(
        `user_id=${user.id}&limit=20${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.body.data.events.map((e) => e.details.i));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...Array(55).keys()].reverse());
  });

  it.each([
    ['user_id=not%20an%20id', 'user_id'],
    ['actor_id=x%27%3B--', 'actor_id'],
    ['type=Not%20A%20Type', 'type'],
    ['type=made.up', 'type'],
    ['type=nothing.*', 'type'],
    ['type=', 'type'],
    ['outcome=maybe', 'outcome'],
    ['ip=999.1.1.1', 'ip'],
    ['ip=localhost', 'ip'],
    ['since=yesterday', 'since'],
    ['since=2026-02-31T25:00:00Z', 'since'],
    ['until=2026-13-01', 'until'],
    ['since=2026-06-01&until=2026-05-01', 'until'],
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=ten', 'limit'],
    ['cursor=%21%21', 'cursor'],
    ['cursor=AAAA', 'cursor'],
    ['userid=abc', null],
    ['user_id=a&user_id=b', 'user_id'],
  ])('when the query is %s, then the answer is 400 VALIDATION_ERROR naming the filter', async (qs, field) => {
    const r = await adminGet(qs);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect(typeof r.body.error).toBe('string');
    expect(Array.isArray(r.body.details)).toBe(true);
    if (field) expect(r.body.details.map((d: { field: string | null }) => d.field)).toContain(field);
    else expect(JSON.stringify(r.body.details)).toContain('userid');
  });

  it('when a user who is not an admin asks, then 403; without a session, then 401', async () => {
    const writer = await makeSession(t, { user_type: 'writer' });
    const customer = await makeSession(t);
    expect((await adminGet('', writer.token)).status).toBe(403);
    expect((await adminGet('', customer.token)).status).toBe(403);
    expect((await t.request('GET', '/auth/admin/audit-events')).status).toBe(401);
    const superadmin = await makeSession(t, { user_type: 'superadmin' });
    expect((await adminGet('limit=1', superadmin.token)).status).toBe(200);
  });
});

describe('GET /auth/user/me/security-events', () => {
  const mine = (token: string, qs = '') => t.request('GET', `/auth/user/me/security-events${qs ? `?${qs}` : ''}`, { session: token });

  it("when a user asks, then they get their own security events, never other people's, and an admin's action without the admin's id or address", async () => {
    const me = await makeSession(t);
    const someone = await makeSession(t);
    await record(scopeOf(me.user, '203.0.113.50', 'req-mine'), {
      type: 'sign_in.succeeded',
      userId: me.user.id,
      actor: { id: me.user.id, user_type: 'customer' },
    });
    await record(scopeOf(admin.user, '198.51.100.77', 'req-admin'), {
      type: 'two_factor.reset',
      userId: me.user.id,
      details: { by_user_id: admin.user.id, reason: 'lost phone' },
    });
    await record(scopeOf(null, '203.0.113.51'), { type: 'password.reset', userId: me.user.id });
    // Not a security event of theirs (an admin's record of a profile change), and someone else's sign-in.
    await record(scopeOf(admin.user, '198.51.100.77'), { type: 'user.updated', userId: me.user.id, details: { fields: ['name'] } });
    await record(scopeOf(someone.user, '203.0.113.52'), { type: 'sign_in.succeeded', userId: someone.user.id });

    const r = await mine(me.token);
    expect(r.status).toBe(200);
    const events = r.body.data.events as Record<string, unknown>[];
    expect(events.map((e) => e.type)).toEqual(['password.reset', 'two_factor.reset', 'sign_in.succeeded']);
    expect(events.every((e) => e.user_id === me.user.id)).toBe(true);
    const reset = events[1];
    expect(reset.actor).toEqual({ user_type: 'admin' });
    expect(reset).toMatchObject({ ip: null, user_agent: null, request_id: null, details: { reason: 'lost phone' } });
    expect(JSON.stringify(r.body)).not.toContain(admin.user.id);
    expect(JSON.stringify(r.body)).not.toContain('198.51.100.77');
    expect(JSON.stringify(r.body)).not.toContain(someone.user.id);
    expect(events[2]).toMatchObject({ actor: { id: me.user.id, user_type: 'customer' }, ip: '203.0.113.50', request_id: 'req-mine' });
    expect(r.body.data.next_cursor).toBeNull();

    const theirs = await mine(someone.token);
    expect(theirs.body.data.events.map((e: { user_id: string }) => e.user_id)).toEqual([someone.user.id]);
  });

  it('when filtered and paged, then the cursor walks their events; a type outside their families or a bad filter is 400; no session is 401', async () => {
    const me = await makeSession(t);
    for (let i = 0; i < 5; i++)
      await record(scopeOf(me.user, '203.0.113.60'), { type: i % 2 ? 'sign_out' : 'sign_in.succeeded', userId: me.user.id, details: { i } });
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { data: { events: { details: { i: number } }[]; next_cursor: string | null } } } = await mine(
        me.token,
        `limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.data.events.map((e) => e.details.i));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    expect((await mine(me.token, 'type=sign_out')).body.data.events.map((e: { details: { i: number } }) => e.details.i)).toEqual([3, 1]);
    expect((await mine(me.token, 'type=sign_in.*')).body.data.events).toHaveLength(3);
    for (const qs of ['type=user.updated', 'type=user.*', 'limit=500', 'since=soon', 'user_id=someone', 'cursor=%25']) {
      const bad = await mine(me.token, qs);
      expect(bad.status, qs).toBe(400);
      expect(bad.body.code, qs).toBe('VALIDATION_ERROR');
    }
    expect((await t.request('GET', '/auth/user/me/security-events')).status).toBe(401);
  });
});
