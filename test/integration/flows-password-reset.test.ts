import { describe, expect, it } from 'vitest';
import { appWithMail } from '../helpers/app-with-mail.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { linkIn, mailTo, mailsTo, nextMailTo, tokenIn } from './flows-helpers.js';

const NEW_PASSWORD = 'Brand-New-Secret-77';
const REQUEST_ANSWER = { success: true, message: 'If the address is registered, a password reset email has been sent.' };
const RESET_SUBJECT = /^Reset your Gatehouse password$/;
/** A reset has a notice of its own (password.reset → password-was-reset). */
const RESET_DONE_SUBJECT = /^Your Gatehouse password was reset$/;

const { t, smtp: sink } = appWithMail({
  env: {
    REQUIRE_EMAIL_VERIFICATION: 'true',
    APP_URL: 'https://app.example.test',
    RESET_URL_ALLOWLIST: 'https://accounts.example.test,myapp://reset',
  },
});

const requestReset = (email: string, extra: Record<string, unknown> = {}, via: TestApp = t) =>
  via.request('POST', '/auth/password-reset/request', { body: { email, ...extra } });

/** Requests a reset and returns the token from the mail (the n-th reset mail to that address). */
async function resetToken(email: string, extra: Record<string, unknown> = {}): Promise<string> {
  const before = mailsTo(sink, email).length;
  expect((await requestReset(email, extra)).body).toEqual(REQUEST_ANSWER);
  return tokenIn(await nextMailTo(sink, email, /^Reset your/, before));
}

const login = (email: string, password: string) => t.request('POST', '/auth/login', { body: { email, password } });

describe('password reset', () => {
  it('when the mailed link is used, then the password changes, sessions end and a notice is mailed', async () => {
    const { user, token: session } = await makeSession(t, { email: uniqueEmail('reset'), name: 'Ana' });
    expect((await requestReset(user.email.toUpperCase())).body).toEqual(REQUEST_ANSWER);

    const mail = await mailTo(sink, user.email, RESET_SUBJECT);
    const link = linkIn(mail);
    expect(link.origin + link.pathname).toBe('https://app.example.test/reset-password');
    expect(mail.text).toContain('60 minutes');
    const token = tokenIn(link);
    expect(token).toMatch(/^rst_/);

    const valid = await t.request('POST', '/auth/password-reset/validate', { body: { token } });
    expect(valid.status).toBe(200);
    expect(valid.body).toEqual({ success: true, valid: true, message: 'Token is valid' });
    const legacy = await t.request('GET', `/auth/password-reset/validate/${token}`);
    expect(legacy.body).toEqual({ success: true, valid: true, message: 'Token is valid' });

    const done = await t.request('POST', '/auth/password-reset/complete', { body: { token, password: NEW_PASSWORD } });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ success: true, message: 'Password has been reset successfully' });

    expect((await t.request('GET', '/auth/validation', { session })).status).toBe(401);
    expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(401);
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
    const notice = await mailTo(sink, user.email, RESET_DONE_SUBJECT);
    expect(notice.text).toContain('Hi Ana,');
  });

  it('when the new password is built on the product name or the email, then 400 WEAK_PASSWORD and the link still works', async () => {
    const email = `marisol.vega.${Date.now()}@example.test`;
    const user = await makeUser(t, { email });
    const token = await resetToken(user.email);
    for (const password of ['Gatehouse-2026', `${email.split('@')[0]}!`, 'Marisol-2026']) {
      const r = await t.request('POST', '/auth/password-reset/complete', { body: { token, password } });
      expect(r.status, password).toBe(400);
      expect(r.body).toMatchObject({ success: false, code: 'WEAK_PASSWORD' });
    }
    expect((await t.request('POST', '/auth/password-reset/complete', { body: { token, password: NEW_PASSWORD } })).status).toBe(200);
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
  });

  it('when a used token is presented again, then validate says invalid and complete is refused', async () => {
    const user = await makeUser(t, { email: uniqueEmail('reset-reuse') });
    const token = await resetToken(user.email);
    expect((await t.request('POST', '/auth/password-reset/reset', { body: { token, new_password: NEW_PASSWORD } })).status).toBe(200);

    const again = await t.request('POST', '/auth/password-reset/complete', { body: { token, password: 'Another-Secret-88' } });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ success: false, error: 'Invalid or expired token', code: 'INVALID_TOKEN' });
    const valid = await t.request('POST', '/auth/password-reset/validate', { body: { token } });
    expect(valid.status).toBe(400);
    expect(valid.body).toMatchObject({ success: false, valid: false, error: 'Invalid or expired token', code: 'INVALID_TOKEN' });
    const legacy = await t.request('GET', `/auth/password-reset/validate/${token}`);
    expect(legacy.status).toBe(400);
    expect(legacy.body).toMatchObject({ valid: false, message: 'Invalid or expired token' });
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
  });

  it('when one reset link is completed by many requests at once, then exactly one succeeds', async () => {
    const user = await makeUser(t, { email: uniqueEmail('race-reset') });
    await t.request('POST', '/auth/password-reset/request', { body: { email: user.email } });
    const token = tokenIn(await mailTo(sink, user.email, /reset/i));
    const rs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => t.request('POST', '/auth/password-reset/complete', { body: { token, password: `Fresh-Passw0rd-${i}x` } })),
    );
    expect(rs.filter((r) => r.status === 200)).toHaveLength(1);
    expect(rs.filter((r) => r.status === 400).every((r) => r.body.code === 'INVALID_TOKEN')).toBe(true);
  });

  it('when the token has expired, then it is refused and the password stays', async () => {
    const user = await makeUser(t, { email: uniqueEmail('reset-expired') });
    const token = await resetToken(user.email);
    await t.app.models.AuthToken.update({ expires_at: new Date(Date.now() - 1000) }, { where: { user_id: user.id, kind: 'password_reset' } });
    expect((await t.request('POST', '/auth/password-reset/validate', { body: { token } })).status).toBe(400);
    expect((await t.request('POST', '/auth/password-reset/complete', { body: { token, password: NEW_PASSWORD } })).status).toBe(400);
    expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(200);
  });

  it('when a newer link is requested, then the older link is void', async () => {
    const user = await makeUser(t, { email: uniqueEmail('reset-newer') });
    const older = await resetToken(user.email);
    const newer = await resetToken(user.email);
    expect((await t.request('POST', '/auth/password-reset/complete', { body: { token: older, password: NEW_PASSWORD } })).status).toBe(400);
    expect((await t.request('POST', '/auth/password-reset/complete', { body: { token: newer, password: NEW_PASSWORD } })).status).toBe(200);
  });

  it('when several links are requested at once, then one stays live, the one mailed last, whatever the timing of the writes', async () => {
    const user = await makeUser(t, { email: uniqueEmail('reset-burst') });
    const before = mailsTo(sink, user.email).length;
    // Each answer comes before its token is written (deferred work): every token write overlaps the others.
    const answers = await Promise.all(Array.from({ length: 5 }, () => requestReset(user.email)));
    for (const a of answers) expect(a.body).toEqual(REQUEST_ANSWER);
    await expect.poll(() => mailsTo(sink, user.email).length - before, { timeout: 10_000 }).toBe(5);
    const live = (await t.app.repos.authTokens.listByUser(user.id)).filter((r) => r.kind === 'password_reset' && !r.used_at);
    expect(live).toHaveLength(1);
    // One after the other: each link voids those before it, and the last mail carries the live one.
    const tokens = mailsTo(sink, user.email).slice(before).map(tokenIn);
    for (const token of tokens.slice(0, -1)) {
      expect((await t.request('POST', '/auth/password-reset/complete', { body: { token, password: NEW_PASSWORD } })).status).toBe(400);
    }
    expect((await t.request('POST', '/auth/password-reset/complete', { body: { token: tokens[4], password: NEW_PASSWORD } })).status).toBe(200);
  });

  it('when two instances are asked for links at once, then exactly one link stays live', async () => {
    const other = await startTestApp({ sharing: t });
    try {
      const user = await makeUser(t, { email: uniqueEmail('reset-instances') });
      const before = mailsTo(sink, user.email).length;
      // Each instance orders its own writes (deferred work); across instances only the database can.
      const asks = Array.from({ length: 6 }, (_, i) => requestReset(user.email, {}, i % 2 ? other : t));
      for (const a of await Promise.all(asks)) expect(a.body).toEqual(REQUEST_ANSWER);
      await expect.poll(() => mailsTo(sink, user.email).length - before, { timeout: 10_000 }).toBe(6);
      const live = (await t.app.repos.authTokens.listByUser(user.id)).filter((r) => r.kind === 'password_reset' && !r.used_at);
      expect(live).toHaveLength(1);
      const valid: number[] = [];
      for (const token of mailsTo(sink, user.email).slice(before).map(tokenIn)) {
        valid.push((await t.request('POST', '/auth/password-reset/validate', { body: { token } })).status);
      }
      expect(valid.sort()).toEqual([200, 400, 400, 400, 400, 400]);
    } finally {
      await other.close();
    }
  });

  it('when the password changes after the link was sent, then the link is void', async () => {
    const { user, token: session } = await makeSession(t, { email: uniqueEmail('reset-changed') });
    const token = await resetToken(user.email);
    const change = await t.request('POST', '/auth/password-change/self', { session, body: { current_password: DEFAULT_PASSWORD, new_password: NEW_PASSWORD } });
    expect(change.status).toBe(200);
    expect((await t.request('POST', '/auth/password-reset/validate', { body: { token } })).status).toBe(400);
  });

  it('when the new password breaks the policy, then 400 names the rule and the link still works', async () => {
    const user = await makeUser(t, { email: uniqueEmail('reset-weak') });
    const token = await resetToken(user.email);
    const weak = await t.request('POST', '/auth/password-reset/complete', { body: { token, password: 'short' } });
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe('WEAK_PASSWORD');
    const missing = await t.request('POST', '/auth/password-reset/complete', { body: { token } });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('VALIDATION_ERROR');
    expect((await t.request('POST', '/auth/password-reset/complete', { body: { token, password: NEW_PASSWORD } })).status).toBe(200);
  });

  it('when an unverified user resets by mail, then the address counts as verified', async () => {
    const user = await makeUser(t, { email: uniqueEmail('reset-unverified'), is_verified: false });
    const token = await resetToken(user.email);
    await t.request('POST', '/auth/password-reset/complete', { body: { token, password: NEW_PASSWORD } });
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
  });
});

describe('password reset request', () => {
  it('when the address is unknown, disabled or known, then the answer is identical and only the known one gets mail', async () => {
    const known = await makeUser(t, { email: uniqueEmail('reset-known') });
    const disabled = await makeUser(t, { email: uniqueEmail('reset-disabled'), disabled_at: new Date() });
    const unknown = uniqueEmail('reset-unknown');
    const answers = [];
    for (const email of [unknown, disabled.email, known.email]) {
      const r = await requestReset(email);
      answers.push({
        status: r.status,
        body: r.body,
        keys: [...r.headers.keys()].filter((k) => !/date|request-id|ratelimit|content-length|etag/.test(k)).sort(),
      });
    }
    expect(answers[0].status).toBe(200);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    await mailTo(sink, known.email, RESET_SUBJECT);
    expect(mailsTo(sink, unknown)).toHaveLength(0);
    expect(mailsTo(sink, disabled.email)).toHaveLength(0);
  });

  it('when the client names an allow-listed resetUrl, then the link points there with the token appended', async () => {
    const user = await makeUser(t, { email: uniqueEmail('reset-allowed') });
    await resetToken(user.email, { resetUrl: 'https://accounts.example.test/recover?lang=es#top' });
    const link = linkIn(mailsTo(sink, user.email).at(-1)!);
    expect(link.origin + link.pathname).toBe('https://accounts.example.test/recover');
    expect(link.searchParams.get('lang')).toBe('es');
    expect(link.searchParams.get('token')).toMatch(/^rst_/);

    await resetToken(user.email, { reset_url: 'myapp://reset/password' });
    expect(mailsTo(sink, user.email).at(-1)!.text).toMatch(/myapp:\/\/reset\/password\?token=rst_/);
  });

  it('when the client names a resetUrl outside the allow-list, then it is ignored and the default link is mailed', async () => {
    const user = await makeUser(t, { email: uniqueEmail('reset-evil') });
    for (const evil of [
      'https://evil.example.net/steal',
      'https://accounts.example.test.evil.net/x',
      'javascript:alert(1)//',
      'otherapp://reset',
      'not a url',
    ]) {
      const before = mailsTo(sink, user.email).length;
      const r = await requestReset(user.email, { resetUrl: evil });
      expect(r.body).toEqual(REQUEST_ANSWER);
      await expect.poll(() => mailsTo(sink, user.email).length).toBeGreaterThan(before);
      const mail = mailsTo(sink, user.email)[before];
      const link = linkIn(mail);
      expect(link.origin + link.pathname, evil).toBe('https://app.example.test/reset-password');
      expect(`${mail.text}\n${mail.html}`).not.toContain('evil');
      expect(`${mail.text}`).not.toContain('otherapp');
    }
  });
});
