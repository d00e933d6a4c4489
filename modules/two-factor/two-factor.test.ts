import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import {
  awayFromStepEdge,
  login,
  makeSession,
  makeUser,
  nextMail,
  nextSms,
  pendingLogin,
  proofCode,
  startWorld,
  TF,
  totpNow,
  uniqueEmail,
  userWithEmail2fa,
  type World,
} from './test/helpers.js';

let w: World;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => w?.close());

const req = (method: string, path: string, session: string | undefined, body?: unknown, headers?: Record<string, string>) =>
  w.t.request(method, path, { session, body, headers });

describe(`two-factor sign-in (${BACKEND})`, () => {
  it('when a user enables email 2FA, logs out and in, then the code from the real SMTP server turns the same session id into a full one', async () => {
    const { user, token, methodId, backupMethodId } = await userWithEmail2fa(w);
    expect((await req('POST', '/auth/logout', token)).status).toBe(200);

    const { r, token: pending } = await pendingLogin(w, user.email);
    expect(r.body.available_methods).toEqual([
      expect.objectContaining({ id: methodId, method: 'email', status: 'active', identifier: expect.stringMatching(/^t\*\*\*@/) }),
      expect.objectContaining({ id: backupMethodId, method: 'backup_codes', status: 'active', identifier: null }),
    ]);
    // The pending session reaches only the two-factor steps and the current-user reads.
    expect((await req('PUT', '/auth/user/me', pending, { name: 'X' })).status).toBe(401);
    expect((await req('POST', `${TF}/toggle`, pending, { two_factor_enabled: false })).status).toBe(401);
    const me = await req('GET', '/auth/me', pending);
    const offered = [expect.objectContaining({ id: methodId }), expect.objectContaining({ id: backupMethodId })];
    expect(me.body).toMatchObject({ success: false, requires_2fa: true, available_methods: offered });
    const userMe = await w.t.request('GET', '/auth/user/me', { session: pending, bridge: true });
    expect(userMe.body).toMatchObject({ success: false, requires_2fa: true, available_methods: offered });

    const { r: started, code } = await nextMail(w, user.email, () => req('POST', `${TF}/email/start`, pending, { method_id: methodId, action: 'login' }));
    expect(started.body).toMatchObject({ success: true, expires_in: 600, method: 'email', verification_sent: true });
    // The activation goes through the sign-in seam: the same 'auth.login' hooks as any sign-in, naming the step.
    const logins: string[] = [];
    const off = w.t.app.hooks.on(
      'auth.login',
      ({ method, session }) => void logins.push(`${method}:${session.status}`),
      'test',
      ({ user: u }) => u.id === user.id,
    );
    const v = await req('POST', `${TF}/verify`, pending, { method_id: methodId, code, action: 'login' }).finally(off);
    expect(v.status, JSON.stringify(v.body)).toBe(200);
    expect(v.body).toMatchObject({
      success: true,
      verified: true,
      session_activated: true,
      sessionId: pending,
      session_id: pending,
      user: { id: user.id, two_factor: true },
    });
    expect(logins).toEqual(['two-factor:active']);
    expect(new Date(v.body.expires_at).getTime() - Date.now()).toBeGreaterThan(6 * 86400_000);
    const valid = await req('GET', '/auth/validation', pending);
    expect(valid.body).toMatchObject({ success: true, user: { id: user.id }, session: { two_factor_verified: true } });
    // The code is spent.
    expect((await req('POST', `${TF}/verify`, pending, { method_id: methodId, code, action: 'login' })).status).toBe(400);
  });

  it('when the only method is an emailed code, then login still stops at the second step (no skip)', async () => {
    const { user } = await userWithEmail2fa(w);
    const r = await login(w, user.email);
    expect(r.body).toMatchObject({ success: false, requires_2fa: true });
    expect((await req('GET', '/auth/validation', r.body.session_id)).body.success).toBe(false);
    expect((await req('PUT', '/auth/user/me', r.body.session_id, { name: 'Y' })).status).toBe(401);
  });

  it('when the method is given by kind (docs spelling `method`), then start and verify find it', async () => {
    const { user } = await userWithEmail2fa(w);
    const { token: pending } = await pendingLogin(w, user.email);
    const { code } = await nextMail(w, user.email, () => req('POST', `${TF}/email/start`, pending, { action: 'login' }));
    // Sent as a JSON number (leading zeros lost on the way): still the same code.
    const v = await req('POST', `${TF}/verify`, pending, { method: 'email', code: Number(code), action: 'login' });
    expect(v.body).toMatchObject({ verified: true, session_activated: true });
  });

  it('when a user sets up SMS with a phone, then the code goes through the real SMS gateway and signs in', async () => {
    const phone = `+1555${String(Date.now()).slice(-7)}`;
    const { user, token } = await makeSession(w.t, { email: uniqueEmail('sms') });
    const { r, code } = await nextSms(w, phone, () => req('POST', `${TF}/sms/setup`, token, { phone: phone.replace(/^(\+1)(\d{3})/, '$1 ($2) ') }));
    expect(r.body).toMatchObject({ method: 'sms', status: 'pending_setup', verification_sent: true });
    expect((await req('POST', `${TF}/verify`, token, { method_id: r.body.method_id, code })).body).toMatchObject({ verified: true, status: 'active' });
    expect((await req('POST', `${TF}/toggle`, token, { two_factor_enabled: true })).body.two_factor_enabled).toBe(true);
    const { token: pending } = await pendingLogin(w, user.email);
    const sent = await nextSms(w, phone, () => req('POST', `${TF}/sms/start`, pending, {}));
    expect(sent.text.body).toMatch(/verification code: \d{6}/);
    expect((await req('POST', `${TF}/verify`, pending, { method: 'sms', code: sent.code })).body.session_activated).toBe(true);
  });

  it('when a token login (mailed code) meets a 2FA user, then it also gets only a pending session', async () => {
    const { user } = await userWithEmail2fa(w);
    const { mail } = await nextMail(
      w,
      user.email,
      () => w.t.request('POST', '/auth/token/login', { body: { identifier: user.email, type: 'email' } }),
      /sign-in link/i,
    );
    const code = /\b(\d{6})\b/.exec(mail.text ?? '')![1];
    const r = await w.t.request('POST', '/auth/token/validate', { body: { identifier: user.email, code } });
    expect(r.body).toMatchObject({
      success: false,
      requires_2fa: true,
      available_methods: [expect.objectContaining({ method: 'email' }), expect.objectContaining({ method: 'backup_codes' })],
    });
  });
});

describe(`authenticator apps (${BACKEND})`, () => {
  it('when TOTP is set up, then the URI and QR come once, the secret is stored encrypted, and a computed code signs in once', async () => {
    const { user, token } = await makeSession(w.t, { email: uniqueEmail('totp') });
    const s = await req('POST', `${TF}/totp/setup`, token, {});
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    expect(s.body.otpauth_url).toMatch(/^otpauth:\/\/totp\/Gatehouse:.*secret=[A-Z2-7]+/);
    expect(s.body.message).toMatch(/^Scan the QR code with an authenticator app/);
    expect(s.body.qr_code).toMatch(/^data:image\/png;base64,/);
    const [rows] = await w.t.app.sequelize.query('SELECT secret_enc FROM two_factor_methods WHERE id = ?', { replacements: [s.body.method_id] });
    const stored = (rows as { secret_enc: string }[])[0].secret_enc;
    expect(stored).toMatch(/^v1\./);
    expect(stored).not.toContain(s.body.secret);
    const listed = await req('GET', `${TF}/methods`, token);
    expect(JSON.stringify(listed.body)).not.toContain(s.body.secret);

    await awayFromStepEdge();
    const first = totpNow(s.body.otpauth_url);
    expect((await req('POST', `${TF}/verify`, token, { method_id: s.body.method_id, code: first, action: 'setup' })).body.status).toBe('active');
    expect((await req('POST', `${TF}/toggle`, token, { two_factor_enabled: true })).body.two_factor_enabled).toBe(true);

    const { token: pending } = await pendingLogin(w, user.email);
    // The setup code's step is used: the same code cannot sign in (replay in its window).
    const replay = await req('POST', `${TF}/verify`, pending, { method: 'totp', code: first });
    expect(replay.status).toBe(400);
    const code = totpNow(s.body.otpauth_url, Date.now() + 30_000);
    const ok = await req('POST', `${TF}/verify`, pending, { method: 'totp', code });
    expect(ok.body).toMatchObject({ verified: true, session_activated: true });
    const { token: again } = await pendingLogin(w, user.email);
    const replayed = await req('POST', `${TF}/verify`, again, { method: 'totp', code });
    expect(replayed.status).toBe(400);
    // Still INVALID_CODE (clients check it), but the words and `reason` say why: a person waits for the next code.
    expect(replayed.body).toMatchObject({
      success: false,
      error: 'This code was already used; wait for the next one from your authenticator app',
      code: 'INVALID_CODE',
      reason: 'already_used',
      attempts_remaining: expect.any(Number),
    });
    const wrong = await req('POST', `${TF}/verify`, again, { method: 'totp', code: code === '000000' ? '111111' : '000000' });
    expect(wrong.body).toMatchObject({ error: 'Invalid code', code: 'INVALID_CODE' });
    expect(wrong.body.reason).toBeUndefined();
  });

  it('when a code from the step before or after is sent (±1 drift), then it is accepted; two steps away it is not', async () => {
    const { user, token } = await makeSession(w.t, { email: uniqueEmail('drift') });
    const s = await req('POST', `${TF}/totp/setup`, token, {});
    await awayFromStepEdge();
    const late = totpNow(s.body.otpauth_url, Date.now() - 30_000);
    expect(
      (await req('POST', `${TF}/verify`, token, { method_id: s.body.method_id, code: totpNow(s.body.otpauth_url, Date.now() - 90_000), action: 'setup' }))
        .status,
    ).toBe(400);
    expect((await req('POST', `${TF}/verify`, token, { method_id: s.body.method_id, code: late, action: 'setup' })).body.status).toBe('active');
    await req('POST', `${TF}/toggle`, token, { two_factor_enabled: true });
    const { token: pending } = await pendingLogin(w, user.email);
    const ahead = totpNow(s.body.otpauth_url, Date.now() + 30_000);
    expect((await req('POST', `${TF}/verify`, pending, { method: 'totp', code: ahead })).body.session_activated).toBe(true);
  });
});

describe(`backup codes (${BACKEND})`, () => {
  it('when backup codes are issued, then each works once, a used one is refused, and regenerating voids the old set', async () => {
    // The first set comes with the first method, when confirming it turned 2FA on; setup refuses a second set.
    const { user, token, methodId, backupMethodId, backupCodes: codes } = await userWithEmail2fa(w);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const proof = await proofCode(w, token, user.email, methodId);
    expect((await req('POST', `${TF}/backup_codes/setup`, token, proof)).body.code).toBe('ALREADY_SET_UP');
    // Set up on their own (a user without 2FA), they come at once too.
    const { token: plain } = await makeSession(w.t, { email: uniqueEmail('codes') });
    const b = await req('POST', `${TF}/backup_codes/setup`, plain, {});
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    expect(b.body.codes).toHaveLength(10);
    expect(new Set(b.body.codes).size).toBe(10);
    for (const [id, shown] of [
      [backupMethodId, codes],
      [b.body.method_id as string, b.body.codes as string[]],
    ] as const) {
      const [rows] = await w.t.app.sequelize.query('SELECT code_hash FROM two_factor_backup_codes WHERE method_id = ?', { replacements: [id] });
      expect(rows).toHaveLength(10);
      expect(JSON.stringify(rows)).not.toContain(shown[0].replace('-', ''));
    }

    // "Backup codes refused after being issued": the very first one works at login.
    const { r: first, token: pending } = await pendingLogin(w, user.email);
    expect(first.body.available_methods.map((m: { method: string }) => m.method).sort()).toEqual(['backup_codes', 'email']);
    const ok = await req('POST', `${TF}/verify`, pending, { method: 'backup_codes', code: codes[0].toUpperCase() });
    expect(ok.body).toMatchObject({ verified: true, session_activated: true });
    const { token: pending2 } = await pendingLogin(w, user.email);
    const again = await req('POST', `${TF}/verify`, pending2, { method: 'backup_codes', code: codes[0] });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('INVALID_CODE');
    const listed = await req('GET', `${TF}/methods`, token);
    expect(listed.body.methods.find((m: { method: string }) => m.method === 'backup_codes').metadata.remaining).toBe(9);

    expect((await req('POST', `${TF}/backup_codes/regenerate`, token, {})).body.code).toBe('VERIFICATION_REQUIRED');
    const fresh = await req('POST', `${TF}/backup_codes/regenerate`, token, await proofCode(w, token, user.email, methodId));
    expect(fresh.body.codes).toHaveLength(10);
    expect((await req('POST', `${TF}/verify`, pending2, { method: 'backup_codes', code: codes[1] })).status).toBe(400);
    expect((await req('POST', `${TF}/verify`, pending2, { method: 'backup_codes', code: fresh.body.codes[1] })).body.session_activated).toBe(true);
  });
});

describe(`trusted devices (${BACKEND})`, () => {
  it('when a device is trusted at verify, then it skips the second step on every later login until forgotten; not for another user', async () => {
    const { user, methodId } = await userWithEmail2fa(w);
    const { token: pending } = await pendingLogin(w, user.email);
    const { code } = await nextMail(w, user.email, () => req('POST', `${TF}/email/start`, pending, { method_id: methodId }));
    const v = await req('POST', `${TF}/verify`, pending, { method_id: methodId, code, trust_device: true });
    expect(v.body.trusted_device_token).toMatch(/^tdv_/);
    const cookie = v.headers.getSetCookie().find((c) => c.startsWith('trusted_device='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    const device = v.body.trusted_device_token as string;
    const [rows] = await w.t.app.sequelize.query('SELECT token_hash FROM two_factor_trusted_devices WHERE user_id = ?', { replacements: [user.id] });
    expect(JSON.stringify(rows)).not.toContain(device);

    // Not one login only: three in a row, by header and by cookie.
    const ways: Record<string, string>[] = [{ 'X-Trusted-Device': device }, { Cookie: `trusted_device=${device}` }, { 'X-Trusted-Device': device }];
    for (const headers of ways) {
      const r = await login(w, user.email, headers);
      expect(r.body, JSON.stringify(r.body)).toMatchObject({ success: true, user: { id: user.id } });
    }
    const other = await userWithEmail2fa(w);
    expect((await login(w, other.user.email, { 'X-Trusted-Device': device })).body.requires_2fa).toBe(true);

    const full = (await login(w, user.email, { 'X-Trusted-Device': device })).body.sessionId;
    expect((await req('GET', `${TF}/trusted_devices`, full)).body.devices).toHaveLength(1);
    expect((await req('POST', `${TF}/trusted_devices/forget`, full)).body.forgotten).toBe(1);
    expect((await login(w, user.email, { 'X-Trusted-Device': device })).body.requires_2fa).toBe(true);
  });

  it('when the password changes, then a trusted device asks for the second step again', async () => {
    const { user, methodId } = await userWithEmail2fa(w);
    const { token: pending } = await pendingLogin(w, user.email);
    const { code } = await nextMail(w, user.email, () => req('POST', `${TF}/email/start`, pending, { method_id: methodId }));
    const device = (await req('POST', `${TF}/verify`, pending, { method_id: methodId, code, trust_device: true })).body.trusted_device_token;
    const session = (await login(w, user.email, { 'X-Trusted-Device': device })).body.sessionId;
    const changed = await req('POST', '/auth/password-change/self', session, { current_password: 'Correct-Horse-42', new_password: 'Another-Horse-43!' });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const r = await w.t.request('POST', '/auth/login', { body: { email: user.email, password: 'Another-Horse-43!' }, headers: { 'X-Trusted-Device': device } });
    expect(r.body.requires_2fa).toBe(true);
  });
});

describe(`module switched off (${BACKEND})`, () => {
  it('when the module is disabled, then 2FA users get 503 MODULE_DISABLED at login (never a full session) and others sign in', async () => {
    const { user } = await userWithEmail2fa(w);
    const plain = await makeUser(w.t, { email: uniqueEmail('plain') });
    await w.t.app.modules.hub.disable('two-factor');
    try {
      const r = await login(w, user.email);
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ success: false, code: 'MODULE_DISABLED' });
      expect(r.body.sessionId).toBeUndefined();
      expect((await login(w, plain.email)).status).toBe(200);
      expect((await w.t.request('GET', `${TF}/system`)).status).toBe(503);
    } finally {
      await w.t.app.modules.hub.enable('two-factor');
    }
    expect((await login(w, user.email)).body.requires_2fa).toBe(true);
  });
});
