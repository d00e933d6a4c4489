import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeSession, makeUser } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const validate = (body: Record<string, unknown> = {}, opts: { query?: string; session?: string; bridge?: boolean } = {}) =>
  t.request('POST', `/auth/bridge/validate${opts.query ?? ''}`, { body, bridge: opts.bridge ?? true, session: opts.session });

describe('POST /auth/bridge/validate', () => {
  it('when the session is valid, then the superset answer carries snake and camel fields for every caller', async () => {
    const { user, token } = await makeSession(t, { user_name: `br_${Date.now()}` });
    const r = await validate({ session_id: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      valid: true,
      user: {
        id: user.id,
        email: user.email,
        user_type: 'customer',
        userType: 'customer',
        userName: user.user_name,
        lastName: 'User',
        isVerified: true,
        twoFactor: false,
      },
      session: { userId: user.id, user_id: user.id, ipAddress: '127.0.0.1', userAgent: 'vitest', two_factor_verified: true },
    });
    expect(r.body.session.expires_at).toBe(r.body.expires_at);
    expect(r.body.session.expiresAt).toBe(r.body.expiresAt);
    expect(r.body.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(typeof r.body.session.lastUsedAt).toBe('string');
    expect(typeof r.body.timestamp).toBe('string');
  });

  it('when the same session is validated twice, then the second answer comes from the in-process cache', async () => {
    const { token } = await makeSession(t);
    const first = await validate({ session_id: token });
    const second = await validate({ session_id: token });
    expect(first.body).toMatchObject({ cached: false, cacheSource: 'db' });
    expect(second.body).toMatchObject({ cached: true, cacheSource: 'ultra' });
  });

  it('when the session id comes as query, body sessionId or X-Session-ID, then each is accepted', async () => {
    const { user, token } = await makeSession(t);
    const a = await validate({}, { query: `?session_id=${token}` });
    const b = await validate({ sessionId: token });
    const c = await validate({}, { session: token });
    for (const r of [a, b, c]) expect(r.body.user?.id).toBe(user.id);
  });

  it('when the bridge secret is missing or wrong, then 401 before anything else', async () => {
    const { token } = await makeSession(t);
    const none = await validate({ session_id: token }, { bridge: false });
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('INVALID_BRIDGE_SECRET');
    const wrong = await t.request('POST', '/auth/bridge/validate', { body: { session_id: token }, headers: { 'X-Bridge-Secret': 'x'.repeat(30) } });
    expect(wrong.status).toBe(401);
  });

  it('when the session is missing, unknown or its user disabled, then 401 with valid:false and "Invalid session"', async () => {
    const { user, token } = await makeSession(t);
    await t.app.repos.users.update(user.id, { disabled_at: new Date() });
    await t.app.services.sessions.invalidateUser(user.id);
    for (const body of [{}, { session_id: 'ses_unknown' }, { session_id: token }]) {
      const r = await validate(body);
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ success: false, valid: false, error: 'Invalid session' });
    }
  });

  it('when the session is pending two-factor, then 200 with the pending shape and valid:false', async () => {
    const user = await makeUser(t, { two_factor: true });
    const { token } = await t.app.services.sessions.create(user.id, { status: 'pending_2fa' });
    const r = await validate({ session_id: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: false, valid: false, requires_2fa: true, sessionId: token });
  });

  it('when standard mode sees another IP, then 401 "IP address mismatch"; the same IP (v4-mapped too) passes', async () => {
    const { token } = await makeSession(t);
    const bad = await validate({ session_id: token, validation_mode: 'STANDARD', ip: '10.9.9.9' });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ success: false, valid: false, error: 'IP address mismatch' });
    const mapped = await validate({ session_id: token, validation_mode: 'standard', ip_address: '::ffff:127.0.0.1', user_agent: 'other' });
    expect(mapped.status).toBe(200);
  });

  it('when advanced or strict mode sees another user agent, then 401 "User agent mismatch"', async () => {
    const { token } = await makeSession(t);
    for (const mode of ['advanced', 'strict']) {
      const bad = await validate({ session_id: token, validation_mode: mode, ip: '127.0.0.1', user_agent: 'curl/8' });
      expect(bad.status).toBe(401);
      expect(bad.body.error).toBe('User agent mismatch');
    }
    const ok = await validate({ session_id: token, validation_mode: 'strict', ip: '127.0.0.1', user_agent: 'vitest', device_id: 'd1' });
    expect(ok.status).toBe(200);
  });

  it('when the session was bound to a device at login, then strict mode demands that same device id', async () => {
    const user = await makeUser(t);
    const login = await t.request('POST', '/auth/login', {
      body: { email: user.email, password: 'Correct-Horse-42', device_id: 'device-A' },
      headers: { 'User-Agent': 'vitest' },
    });
    expect(login.status).toBe(200);
    const token = login.body.sessionId as string;
    const strict = (device_id?: string) =>
      validate({ session_id: token, validation_mode: 'strict', ip: '127.0.0.1', user_agent: 'vitest', ...(device_id ? { device_id } : {}) });
    expect((await strict('device-A')).status).toBe(200);
    const other = await strict('device-B');
    expect(other.status).toBe(401);
    expect(other.body).toMatchObject({ success: false, valid: false, error: 'Device ID mismatch' });
    expect((await strict()).body.error).toBe('Device ID mismatch');
    // Modes below strict do not look at the device.
    const advanced = await validate({ session_id: token, validation_mode: 'advanced', ip: '127.0.0.1', user_agent: 'vitest', device_id: 'device-B' });
    expect(advanced.status).toBe(200);
  });

  it('when the mode is disabled or none, then context is not checked', async () => {
    const { token } = await makeSession(t);
    for (const mode of ['disabled', 'none', undefined]) {
      const r = await validate({ session_id: token, validation_mode: mode, ip: '10.0.0.1', user_agent: 'x' });
      expect(r.status).toBe(200);
    }
  });

  it('when the mode is unknown, then 400', async () => {
    const { token } = await makeSession(t);
    const r = await validate({ session_id: token, validation_mode: 'paranoid' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('VALIDATION_ERROR');
  });
});
