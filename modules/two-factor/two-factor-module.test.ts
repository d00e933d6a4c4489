import { describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { errorCodes } from './error-codes.js';
import * as h from './test/helpers.js';

const { TF } = h;
// The operator's name from when the setting was core's: the module still reads it.
const world = h.useWorld({ TRUSTED_DEVICE_TTL: '2h' });
const req = (method: string, path: string, session: string | undefined, body?: unknown) => world().t.request(method, path, { session, body });

describe(`what the two-factor module owns (${BACKEND})`, () => {
  it('when TRUSTED_DEVICE_TTL is set, then the module setting trusted_device_ttl takes it and a trusted device lasts that long', async () => {
    expect(world().t.app.modules.config<{ trusted_device_ttl: number }>('two-factor').trusted_device_ttl).toBe(7200);
    const { user, methodId } = await h.userWithEmail2fa(world());
    const { token: pending } = await h.pendingLogin(world(), user.email);
    const { code } = await h.nextMail(world(), user.email, () => req('POST', `${TF}/email/start`, pending, { method_id: methodId }));
    const v = await req('POST', `${TF}/verify`, pending, { method_id: methodId, code, trust_device: true });
    const lasts = new Date(v.body.trusted_device_expires_at).getTime() - Date.now();
    expect(lasts).toBeGreaterThan(7200_000 - 60_000);
    expect(lasts).toBeLessThanOrEqual(7200_000);
    expect((await h.login(world(), user.email, { 'X-Trusted-Device': v.body.trusted_device_token })).body).toMatchObject({ success: true });
  });

  it('when /openapi.json is read, then the module tag lists every error code the module declares', async () => {
    const doc = (await world().t.request('GET', '/openapi.json')).body;
    const tag = doc.tags.find((t: { name: string }) => t.name === 'two-factor');
    const codes = (tag['x-error-codes'] as { code: string; status: number }[]).map((c) => `${c.code}:${c.status}`);
    expect(codes).toEqual(errorCodes.map((c) => `${c.code}:${c.status}`));
    for (const c of ['LAST_METHOD:400', 'VERIFICATION_REQUIRED:400', 'INVALID_CODE:400', 'CODE_EXPIRED:400', 'METHOD_NOT_FOUND:404', 'TWO_FACTOR_IN_USE:409'])
      expect(codes).toContain(c);
  });

  it('when an authenticator app is set up twice or a code is asked for it, then the answers name the app', async () => {
    const { token } = await h.makeSession(world().t, { email: h.uniqueEmail('totp-words') });
    const s = await req('POST', `${TF}/totp/setup`, token, {});
    expect(s.body.message).toBe('Scan the QR code with an authenticator app, then verify a code with action "setup"');
    await h.awayFromStepEdge();
    expect((await req('POST', `${TF}/verify`, token, { method_id: s.body.method_id, code: h.totpNow(s.body.otpauth_url), action: 'setup' })).status).toBe(200);
    const again = await req('POST', `${TF}/totp/setup`, token, {});
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ success: false, code: 'ALREADY_SET_UP', error: 'An authenticator app is set up already; remove it first' });
    const start = await req('POST', `${TF}/totp/start`, token, {});
    expect(start.status).toBe(400);
    expect(JSON.stringify(start.body)).toContain('totp codes come from the app, backup codes from the list');
    expect(JSON.stringify([s.body, again.body, start.body])).not.toMatch(/\bctx\b/);
  });
});
