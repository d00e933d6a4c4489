import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeSession, makeUser } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const put = (token: string, body: unknown, path = '/auth/user/me', method = 'PUT') => t.request(method, path, { session: token, body });

describe('GET /auth/user/me', () => {
  it('when the bridge secret and a session are sent, then the login-compatible shape comes back with data as the user', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('GET', `/auth/user/me?session_id=${token}`, { bridge: true });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, user: { id: user.id }, sessionId: token, session_id: token });
    expect(r.body.expires_at).toBe(r.body.expiresAt);
    expect(r.body.data).toMatchObject({ id: user.id, email: user.email, user: { id: user.id } });
  });

  it('when the bridge secret or the session is missing or wrong, then 401', async () => {
    const { token } = await makeSession(t);
    expect((await t.request('GET', '/auth/user/me', { session: token })).status).toBe(401);
    expect((await t.request('GET', '/auth/user/me', { bridge: true })).status).toBe(401);
    expect((await t.request('GET', '/auth/user/me', { bridge: true, session: 'ses_bad' })).body.error).toBe('Invalid session');
    const wrong = await t.request('GET', '/auth/user/me', { session: token, headers: { 'X-Bridge-Secret': 'not-the-secret-at-all' } });
    expect(wrong.status).toBe(401);
  });

  it('when the session is pending two-factor, then the pending shape is answered', async () => {
    const user = await makeUser(t, { two_factor: true });
    const { token } = await t.app.services.sessions.create(user.id, { status: 'pending_2fa' });
    const r = await t.request('GET', '/auth/user/me', { bridge: true, session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: false, requires_2fa: true, sessionId: token, user: { id: user.id } });
  });
});

describe('PUT /auth/user/me (and /auth/profile)', () => {
  it('when every profile field is sent, then they are stored, returned and seen by the next request', async () => {
    const { user, token } = await makeSession(t);
    const seen: string[] = [];
    const off = t.app.hooks.on('user.updated', (p) => void seen.push((p.user as { id: string }).id));
    const body = {
      name: 'Ana',
      last_name: 'Ruiz',
      user_name: `ana.${Date.now()}`,
      phone: '+1 (555) 010-0000',
      dob: '1990-02-28',
      gender: 'female',
      title: 'Dr',
      reference_id: 'ref-1',
      recovery_email: 'Backup@Example.test',
      tmz: 'america/new_york',
      metadata: { theme: 'dark', n: 1 },
      lang: 'pt-BR',
      display_name: 'Ana R',
    };
    const r = await put(token, body);
    off();
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.data.user).toMatchObject({
      name: 'Ana',
      last_name: 'Ruiz',
      user_name: body.user_name,
      phone: body.phone,
      dob: '1990-02-28',
      gender: 'female',
      title: 'Dr',
      tmz: 'America/New_York',
      metadata: { theme: 'dark', n: 1 },
      lang: 'pt-BR',
      display_name: 'Ana R',
    });
    expect(r.body.data.user.recovery_email).toBeUndefined();
    const row = await t.app.repos.users.findById(user.id);
    expect(row).toMatchObject({ reference_id: 'ref-1', recovery_email: 'backup@example.test' });
    const me = await t.request('GET', '/auth/me', { session: token });
    expect(me.body.data.user.name).toBe('Ana');
    expect(seen).toEqual([user.id]);
  });

  it('when empty strings are sent, then the fields are cleared', async () => {
    const { token } = await makeSession(t, { phone: '+34 600', title: 'Mr' });
    const r = await put(token, { phone: '', title: '', metadata: null });
    expect(r.status).toBe(200);
    expect(r.body.data.user).toMatchObject({ phone: null, title: null });
  });

  it('when camelCase spellings are sent, then they update the snake_case fields', async () => {
    const { token } = await makeSession(t);
    const r = await put(token, { lastName: 'Camel', displayName: 'C' });
    expect(r.status).toBe(200);
    expect(r.body.data.user).toMatchObject({ last_name: 'Camel', display_name: 'C' });
  });

  it('when the older /auth/profile paths are used (PUT and POST), then they update the same way', async () => {
    const { token } = await makeSession(t);
    expect((await put(token, { name: 'P1' }, '/auth/profile')).body.data.user.name).toBe('P1');
    expect((await put(token, { name: 'P2' }, '/auth/profile', 'POST')).body.data.user.name).toBe('P2');
  });

  it.each([
    ['an impossible date', { dob: '2023-02-30' }],
    ['a future date', { dob: '2999-01-01' }],
    ['a date before 1900', { dob: '1899-12-31' }],
    ['a non-ISO date', { dob: '01/02/1990' }],
    ['an unknown time zone', { tmz: 'Mars/Olympus' }],
    ['an offset for a zone', { tmz: '+01:00' }],
    ['metadata as an array', { metadata: [1, 2] }],
    ['metadata over 8 KB', { metadata: { x: 'a'.repeat(9000) } }],
    ['a name over 100 characters', { name: 'n'.repeat(101) }],
    ['a short user name', { user_name: 'ab' }],
    ['a user name with spaces', { user_name: 'a b c' }],
    ['a malformed phone', { phone: 'call me' }],
    ['a malformed recovery email', { recovery_email: 'nope' }],
    ['a number for a name', { name: 42 }],
    ['an unknown field', { favourite_colour: 'blue' }],
  ])('when the body has %s, then 400 VALIDATION_ERROR', async (_label, body) => {
    const { token } = await makeSession(t);
    const r = await put(token, body);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('VALIDATION_ERROR');
    expect(typeof r.body.error).toBe('string');
  });

  it('when the body is not an object, then 400', async () => {
    const { token } = await makeSession(t);
    expect((await put(token, [1, 2])).status).toBe(400);
  });

  it('when the user name belongs to someone else (any case), then 400 USER_NAME_TAKEN', async () => {
    const other = await makeUser(t, { user_name: `owner_${Date.now()}` });
    const { token } = await makeSession(t);
    const r = await put(token, { user_name: other.user_name!.toUpperCase() });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('USER_NAME_TAKEN');
  });

  it('when business fields are sent without ext-business, then 400 module_not_installed', async () => {
    const { token } = await makeSession(t);
    for (const body of [{ is_business: true }, { biz_name: 'ACME' }]) {
      const r = await put(token, body);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('module_not_installed');
    }
  });

  it('when acquisition or privacy fields are sent, then 400 FIELD_NOT_ALLOWED names the route that takes them', async () => {
    const { token } = await makeSession(t);
    const acq = await put(token, { acquisition_source: 'ads' });
    expect(acq.status).toBe(400);
    expect(acq.body.code).toBe('FIELD_NOT_ALLOWED');
    expect(acq.body.error).toContain('/auth/user/me/onboarding/complete');
    const team = await put(token, { team_size_range: '1-10' });
    expect(team.body.code).toBe('FIELD_NOT_ALLOWED');
    const gdpr = await put(token, { gdpr_consent: true });
    expect(gdpr.body.code).toBe('FIELD_NOT_ALLOWED');
    expect(gdpr.body.error).toContain('/auth/user/me/privacy');
  });

  it('when the email is echoed unchanged and picture is sent, then the update goes on; a changed email is refused', async () => {
    const { user, token } = await makeSession(t);
    const same = await put(token, { email: user.email.toUpperCase(), picture: 'https://evil.test/x.png', name: 'Echo' });
    expect(same.status).toBe(200);
    expect(same.body.data.user).toMatchObject({ email: user.email, name: 'Echo', picture: null });
    const changed = await put(token, { email: 'new@example.test' });
    expect(changed.status).toBe(400);
    expect(changed.body.code).toBe('FIELD_NOT_ALLOWED');
  });

  it('when there is no session, then 401', async () => {
    expect((await t.request('PUT', '/auth/user/me', { body: { name: 'x' } })).status).toBe(401);
    expect((await t.request('PUT', '/auth/profile', { session: 'ses_nope', body: { name: 'x' } })).status).toBe(401);
  });
});
