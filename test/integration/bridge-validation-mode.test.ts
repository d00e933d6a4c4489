import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { startTestApp, TEST_ENV, type TestApp } from '../helpers/test-app.js';
import { makeSession } from '../helpers/factories.js';

// A backend built on the original (the Rust starter) sends the client's context but no validation_mode:
// the operator's BRIDGE_VALIDATION_MODE must still bind the session to that context.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { BRIDGE_VALIDATION_MODE: 'ADVANCED' } });
});
afterAll(async () => t?.close());

const validate = (body: Record<string, unknown>) => t.request('POST', '/auth/bridge/validate', { body, bridge: true });

describe('BRIDGE_VALIDATION_MODE', () => {
  it('when a request names no mode, then the server mode applies: another IP or user agent is refused', async () => {
    const { token } = await makeSession(t);
    const ip = await validate({ session_id: token, ip: '10.9.9.9', user_agent: 'vitest' });
    expect(ip.status).toBe(401);
    expect(ip.body).toMatchObject({ success: false, valid: false, error: 'IP address mismatch' });
    const ua = await validate({ session_id: token, ip: '127.0.0.1', user_agent: 'curl/8' });
    expect(ua.status).toBe(401);
    expect(ua.body.error).toBe('User agent mismatch');
    const same = await validate({ session_id: token, ip: '127.0.0.1', user_agent: 'vitest' });
    expect(same.status).toBe(200);
  });

  it('when a request asks for a weaker mode, then the server mode still applies', async () => {
    const { token } = await makeSession(t);
    for (const mode of ['disabled', 'none', 'standard']) {
      const r = await validate({ session_id: token, validation_mode: mode, ip: '127.0.0.1', user_agent: 'curl/8' });
      expect(r.status, mode).toBe(401);
      expect(r.body.error).toBe('User agent mismatch');
    }
  });

  it('when a request asks for a stricter mode, then that mode applies (strict adds the device)', async () => {
    const user = (await makeSession(t)).user;
    const { token } = await t.app.services.sessions.create(user.id, { ip: '127.0.0.1', userAgent: 'vitest', deviceId: 'dev-1' });
    const ctx = { session_id: token, ip: '127.0.0.1', user_agent: 'vitest', device_id: 'dev-2' };
    expect((await validate(ctx)).status).toBe(200);
    const strict = await validate({ ...ctx, validation_mode: 'strict' });
    expect(strict.status).toBe(401);
    expect(strict.body.error).toBe('Device ID mismatch');
  });

  it('when the setting is not a mode, then the configuration is refused naming the key', () => {
    expect(() => loadConfig({ env: { ...TEST_ENV, BRIDGE_VALIDATION_MODE: 'paranoid' }, skipFile: true })).toThrow(/BRIDGE_VALIDATION_MODE/);
  });
});
