import { describe, expect, it } from 'vitest';
import { appWithMail } from '../helpers/app-with-mail.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
import type { TestApp } from '../helpers/test-app.js';
import { codeIn, follow, linkIn, mailTo, mailsTo, tokenIn } from './flows-helpers.js';

const LOGIN_SUBJECT = /^Your Gatehouse sign-in link$/;
const INVALID = { success: false, error: 'Invalid or expired token', code: 'INVALID_TOKEN' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const env = { REQUIRE_EMAIL_VERIFICATION: 'true', RESET_URL_ALLOWLIST: 'https://app.example.test' };
const {
  t,
  smtp,
  sms,
  others: { bridged },
} = appWithMail({ sms: true, env, others: { bridged: { ...env, TOKEN_LOGIN_REQUIRES_BRIDGE_SECRET: 'true' } } });

let phoneSeq = 0;
const uniquePhone = () => `+1555${String(Date.now() % 1_000_000).padStart(6, '0')}${++phoneSeq % 10}`;

const requestLogin = (app: TestApp, body: Record<string, unknown>, bridge = false) => app.request('POST', '/auth/token/login', { body, bridge });

function expectSignedIn(r: { status: number; body: any; headers: Headers }, userId: string) {
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ success: true, message: 'Token validated successfully', tokenType: 'login', user: { id: userId } });
  expect(r.body.sessionId).toMatch(/^ses_/);
  expect(r.body.session_id).toBe(r.body.sessionId);
  expect(r.body.expires_at).toBe(r.body.expiresAt);
  expect(r.body.token_id).toMatch(UUID);
  expect(r.headers.getSetCookie().some((c) => c.startsWith(`session_id=${r.body.sessionId}`))).toBe(true);
}

describe('token login by email', () => {
  it('when the mailed link is followed, then a session is issued once, the user is verified, and the link dies', async () => {
    const user = await makeUser(t, { email: uniqueEmail('tl-link'), is_verified: false, name: 'Ana' });
    const r = await requestLogin(t, { identifier: user.email, type: 'email' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'Verification email sent successfully' });
    expect(r.body.token_id).toMatch(UUID);

    const mail = await mailTo(smtp, user.email, LOGIN_SUBJECT);
    const link = linkIn(mail);
    expect(link.pathname).toBe('/auth/token/validate');
    expect(codeIn(mail.text)).toMatch(/^\d{6}$/);

    const signed = await follow(t, link);
    expectSignedIn(signed, user.id);
    expect(signed.body.token_id).toBe(r.body.token_id);
    expect(signed.body.user).toMatchObject({
      email: user.email,
      is_verified: true,
      isVerified: true,
      lastName: 'User',
      userType: 'customer',
      user_type: 'customer',
    });
    expect((await t.request('GET', '/auth/validation', { session: signed.body.sessionId })).status).toBe(200);

    const again = await follow(t, link);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(INVALID);
    const post = await t.request('POST', '/auth/token/validate', { body: { token: tokenIn(link) } });
    expect(post.body).toEqual(INVALID);
  });

  it('when the same link is opened many times at once, then exactly one session is issued', async () => {
    const user = await makeUser(t, { email: uniqueEmail('tl-race') });
    await requestLogin(t, { identifier: user.email, type: 'email' });
    const link = linkIn(await mailTo(smtp, user.email, LOGIN_SUBJECT));
    const results = await Promise.all(Array.from({ length: 6 }, () => follow(t, link)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    expect(await t.app.services.sessions.listForUser(user.id)).toHaveLength(1);
  });

  it('when one login code is posted by many requests at once, then exactly one session is issued', async () => {
    const user = await makeUser(t, { email: uniqueEmail('race-code') });
    const asked = await t.request('POST', '/auth/token/login', { body: { identifier: user.email } });
    const code = codeIn((await mailTo(smtp, user.email, /.*/)).text);
    const rs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.request('POST', '/auth/token/validate', { body: i % 2 ? { token_id: asked.body.token_id, code } : { identifier: user.email, code } }),
      ),
    );
    expect(rs.filter((r) => r.status === 200)).toHaveLength(1);
    expect(await t.app.services.sessions.listForUser(user.id)).toHaveLength(1);
  });
  it('when the mailed code is posted with the token_id or with the address, then a session is issued', async () => {
    const user = await makeUser(t, { email: uniqueEmail('tl-code') });
    const r1 = await requestLogin(t, { identifier: user.email });
    const code1 = codeIn((await mailTo(smtp, user.email, LOGIN_SUBJECT)).text);
    expectSignedIn(await t.request('POST', '/auth/token/validate', { body: { token_id: r1.body.token_id, code: code1 } }), user.id);
    expect((await t.request('POST', '/auth/token/validate', { body: { token_id: r1.body.token_id, code: code1 } })).body).toEqual(INVALID);

    await requestLogin(t, { identifier: user.email.toUpperCase(), type: 'email' });
    await expect.poll(() => mailsTo(smtp, user.email).length).toBe(2);
    const code2 = codeIn(mailsTo(smtp, user.email)[1].text);
    expectSignedIn(await t.request('POST', '/auth/token/validate', { body: { identifier: user.email, code: code2 } }), user.id);
  });

  it('when wrong codes are tried five times, then the token is void even for the right code', async () => {
    const user = await makeUser(t, { email: uniqueEmail('tl-guess') });
    const r = await requestLogin(t, { identifier: user.email, type: 'email' });
    const mail = await mailTo(smtp, user.email, LOGIN_SUBJECT);
    const code = codeIn(mail.text);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      const w = await t.request('POST', '/auth/token/validate', { body: { token_id: r.body.token_id, code: wrong } });
      expect(w.body).toEqual(INVALID);
    }
    expect((await t.request('POST', '/auth/token/validate', { body: { token_id: r.body.token_id, code } })).body).toEqual(INVALID);
    expect((await follow(t, linkIn(mail))).body).toEqual(INVALID);
  });

  it('when the identifier is unknown, then the answer has the same shape and nothing is sent', async () => {
    const known = await makeUser(t, { email: uniqueEmail('tl-known') });
    const unknown = uniqueEmail('tl-unknown');
    const a = await requestLogin(t, { identifier: unknown, type: 'email' });
    const b = await requestLogin(t, { identifier: known.email, type: 'email' });
    expect(a.status).toBe(b.status);
    expect(Object.keys(a.body).sort()).toEqual(Object.keys(b.body).sort());
    expect({ ...a.body, token_id: 'x' }).toEqual({ ...b.body, token_id: 'x' });
    expect(a.body.token_id).toMatch(UUID);
    await mailTo(smtp, known.email, LOGIN_SUBJECT);
    expect(mailsTo(smtp, unknown)).toHaveLength(0);
    expect((await t.request('POST', '/auth/token/validate', { body: { token_id: a.body.token_id, code: '123456' } })).body).toEqual(INVALID);
  });

  it('when redirect_url is allow-listed it carries the token; otherwise the default link is mailed', async () => {
    const user = await makeUser(t, { email: uniqueEmail('tl-redirect') });
    await requestLogin(t, { identifier: user.email, type: 'email', redirect_url: 'https://app.example.test/magic?next=%2Fhome' });
    const good = linkIn(await mailTo(smtp, user.email, LOGIN_SUBJECT));
    expect(good.origin + good.pathname).toBe('https://app.example.test/magic');
    expect(good.searchParams.get('next')).toBe('/home');
    expect(good.searchParams.get('token')).toMatch(/^lgn_/);

    await requestLogin(t, { identifier: user.email, type: 'email', redirect_url: 'https://evil.example.net/magic' });
    await expect.poll(() => mailsTo(smtp, user.email).length).toBe(2);
    const mail = mailsTo(smtp, user.email)[1];
    expect(linkIn(mail).pathname).toBe('/auth/token/validate');
    expect(`${mail.text}${mail.html}`).not.toContain('evil.example.net');
  });

  it('when the user has two-factor on, then the token gives only a pending two-factor session', async () => {
    const user = await makeUser(t, { email: uniqueEmail('tl-2fa'), two_factor: true });
    await requestLogin(t, { identifier: user.email, type: 'email' });
    // A two-factor provider must answer, or the sign-in fails closed (503 MODULE_DISABLED).
    const off = t.app.hooks.on('auth.two_factor.methods', (p) => void (p.methods as unknown[]).push({ id: 'm1', method: 'email', status: 'active' }));
    const r = await follow(t, linkIn(await mailTo(smtp, user.email, LOGIN_SUBJECT)));
    off();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: false, requires_2fa: true });
    expect((await t.request('GET', '/auth/validation', { session: r.body.sessionId })).body.success).not.toBe(true);
  });

  it('when the user has two-factor on and no provider answers (module off or gone), then 503 MODULE_DISABLED and no session', async () => {
    const user = await makeUser(t, { email: uniqueEmail('tl-2fa-off'), two_factor: true });
    await requestLogin(t, { identifier: user.email, type: 'email' });
    const r = await follow(t, linkIn(await mailTo(smtp, user.email, LOGIN_SUBJECT)));
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ success: false, code: 'MODULE_DISABLED' });
    expect(r.body.sessionId).toBeUndefined();
  });
});

describe('token login by SMS', () => {
  it('when the texted code is posted with the token_id, then a session is issued, once', async () => {
    const phone = uniquePhone();
    const user = await makeUser(t, { email: uniqueEmail('tl-sms'), phone, lang: 'es' });
    const r = await requestLogin(t, { identifier: phone, type: 'sms' });
    expect(r.body).toMatchObject({ success: true, message: 'Verification code sent' });
    const text = await sms.waitFor((m) => m.to === phone);
    expect(text.from).toBe('+15550000000');
    expect(text.body).toMatch(/^Código de Gatehouse: \d{6}\./);
    const code = codeIn(text.body);

    expectSignedIn(await t.request('POST', '/auth/token/validate', { body: { token_id: r.body.token_id, code } }), user.id);
    expect((await t.request('POST', '/auth/token/validate', { body: { token_id: r.body.token_id, code } })).body).toEqual(INVALID);
  });

  it('when the phone is sent with spaces as type phone and validated by number, then it still matches', async () => {
    const phone = uniquePhone();
    const user = await makeUser(t, { phone });
    const spaced = `${phone.slice(0, 2)} ${phone.slice(2, 5)} ${phone.slice(5)}`;
    await requestLogin(t, { identifier: spaced, type: 'phone' });
    const code = codeIn((await sms.waitFor((m) => m.to === phone)).body);
    expectSignedIn(await t.request('POST', '/auth/token/validate', { body: { identifier: spaced, code } }), user.id);
  });

  it('when the phone is unknown, then the answer matches and no SMS is sent; a malformed one is 400', async () => {
    const phone = uniquePhone();
    const before = sms.attempts();
    const r = await requestLogin(t, { identifier: phone, type: 'sms' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'Verification code sent' });
    expect(r.body.token_id).toMatch(UUID);
    expect(sms.attempts()).toBe(before);
    const bad = await requestLogin(t, { identifier: '555-1234', type: 'sms' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('token login with the bridge secret required', () => {
  it('when the secret is missing, then 401; with it, the flow works', async () => {
    const user = await makeUser(bridged, { email: uniqueEmail('tl-bridge') });
    expect((await requestLogin(bridged, { identifier: user.email, type: 'email' })).status).toBe(401);
    const r = await requestLogin(bridged, { identifier: user.email, type: 'email' }, true);
    expect(r.status).toBe(200);
    const token = tokenIn(await mailTo(smtp, user.email, LOGIN_SUBJECT));
    expect((await bridged.request('POST', '/auth/token/validate', { body: { token } })).status).toBe(401);
    expectSignedIn(await bridged.request('POST', '/auth/token/validate', { body: { token }, bridge: true }), user.id);
  });
});

describe('token validate input', () => {
  it('when neither a token nor a code is given, then 400 VALIDATION_ERROR', async () => {
    const r = await t.request('POST', '/auth/token/validate', { body: {} });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('VALIDATION_ERROR');
  });
});
