import { describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeSession, useWorld, userWithEmail2fa } from '../../modules/two-factor/test/helpers.js';

/**
 * Issue 23's "done": a failed and a successful sign-in, a password change, an admin's 2FA reset and a
 * module install each appear in GET /auth/admin/audit-events with the right actor, user, ip and request
 * id, and no secret anywhere in what the query answers.
 */
const world = useWorld();
const LOOPBACK = /^(127\.0\.0\.1|::1|0:0:0:0:0:0:0:1)$/;
const NEW_PASSWORD = 'Brand-New-Horse-91';

describe('the audit trail, end to end', () => {
  it('when people sign in, change a password, reset a second factor and install a module, then the admin query shows each with who, whom, where and which request', async () => {
    const { t } = world();
    const superadmin = await makeSession(t, { user_type: 'superadmin' });
    const admin = await makeSession(t, { user_type: 'admin' });
    const tfa = await userWithEmail2fa(world());
    const { user } = await makeSession(t);
    const rid = (what: string) => ({ 'X-Request-ID': `acc-${what}-${user.id.slice(0, 8)}` });

    const bad = await t.request('POST', '/auth/login', { body: { email: user.email, password: 'Wrong-Horse-00' }, headers: rid('bad') });
    expect(bad.status).toBe(401);
    const good = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD }, headers: rid('good') });
    expect(good.status).toBe(200);
    const session = good.body.session_id as string;
    const changed = await t.request('POST', '/auth/password-change/self', {
      session,
      body: { current_password: DEFAULT_PASSWORD, new_password: NEW_PASSWORD },
      headers: rid('password'),
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const reset = await t.request('POST', `/auth/admin/users/${tfa.user.id}/two-factor/reset`, { session: admin.token, headers: rid('reset') });
    expect(reset.status).toBe(200);
    const install = await t.request('POST', '/api/v1/modules/install/onboarding/run', { session: superadmin.token, body: {}, headers: rid('install') });
    expect(install.status, JSON.stringify(install.body)).toBe(200);

    // The failed sign-in is written after its answer.
    const query = (q: string) => t.request('GET', `/auth/admin/audit-events?${q}`, { session: admin.token });
    await expect.poll(async () => (await query(`user_id=${user.id}&type=sign_in.failed`)).body.data.events.length).toBe(1);
    const mine = (await query(`user_id=${user.id}`)).body.data.events as Record<string, unknown>[];
    const byRequest = (what: string, type: string) => mine.find((e) => e.request_id === rid(what)['X-Request-ID'] && e.type === type);
    expect(byRequest('bad', 'sign_in.failed')).toMatchObject({ outcome: 'failure', actor: null, user_id: user.id, details: { reason: 'wrong_password' } });
    expect(byRequest('good', 'sign_in.succeeded')).toMatchObject({ outcome: 'success', actor: { id: user.id }, details: { method: 'password' } });
    expect(byRequest('password', 'password.changed')).toMatchObject({ actor: { id: user.id }, user_id: user.id });
    for (const e of mine) expect(e.ip).toMatch(LOOPBACK);

    const resetEvents = (await query(`user_id=${tfa.user.id}&type=two_factor.reset`)).body.data.events;
    expect(resetEvents).toHaveLength(1);
    expect(resetEvents[0]).toMatchObject({ actor: { id: admin.user.id, user_type: 'admin' }, user_id: tfa.user.id, request_id: rid('reset')['X-Request-ID'] });
    expect(resetEvents[0].ip).toMatch(LOOPBACK);

    const installed = (await query(`actor_id=${superadmin.user.id}&type=module.*`)).body.data.events;
    expect(installed[0]).toMatchObject({
      type: 'module.installed',
      actor: { id: superadmin.user.id, user_type: 'superadmin' },
      details: { module: 'onboarding' },
    });
    expect(installed[0].request_id).toBe(rid('install')['X-Request-ID']);

    const everything = JSON.stringify((await query('limit=200')).body);
    for (const secret of [DEFAULT_PASSWORD, NEW_PASSWORD, 'Wrong-Horse-00', session, superadmin.token, admin.token, tfa.token])
      expect(everything).not.toContain(secret);
  });
});
