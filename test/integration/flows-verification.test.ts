import { describe, expect, it } from 'vitest';
import { appWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import type { TestApp } from '../helpers/test-app.js';
import { follow, linkIn, mailTo, mailsTo } from './flows-helpers.js';

const RESEND_ANSWER = { success: true, message: 'If the address is registered and unverified, a verification email has been sent.' };
const INVALID = { success: false, error: 'Invalid or expired token', code: 'INVALID_TOKEN' };
const VERIFY_SUBJECT = /^Verify your email for Gatehouse$/;

const {
  t,
  smtp: sink,
  others: { redirecting, lenient },
} = appWithMail({
  env: { REQUIRE_EMAIL_VERIFICATION: 'true' },
  others: {
    redirecting: { REQUIRE_EMAIL_VERIFICATION: 'true', VERIFY_REDIRECT_URL: 'https://app.example.test/welcome?from=mail' },
    lenient: {},
  },
});

const register = (app: TestApp, email: string, extra: Record<string, unknown> = {}) =>
  app.request('POST', '/auth/register/public', { body: { email, password: DEFAULT_PASSWORD, name: 'Ana', last_name: 'Diaz', ...extra } });

const login = (app: TestApp, email: string) => app.request('POST', '/auth/login', { body: { email, password: DEFAULT_PASSWORD } });

describe('email verification on registration', () => {
  it('when a user registers, then the mailed link verifies the address and login starts working', async () => {
    const email = uniqueEmail('verify');
    const reg = await register(t, email);
    expect(reg.status).toBe(200);
    expect(reg.body.data.user.is_verified).toBe(false);

    const mail = await mailTo(sink, email, VERIFY_SUBJECT);
    expect(mail.text).toContain('Hi Ana,');
    const link = linkIn(mail);
    expect(link.pathname).toBe('/auth/token/verify');

    const before = await login(t, email);
    expect(before.status).toBe(403);
    expect(before.body.code).toBe('EMAIL_NOT_VERIFIED');

    const verified = await follow(t, link);
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ success: true, message: 'Email verified' });
    expect((await t.app.repos.users.findByEmail(email))?.is_verified).toBe(true);

    const after = await login(t, email);
    expect(after.status).toBe(200);
    expect(after.body.user.is_verified).toBe(true);
  });

  it('when the link is opened a second time, then it is refused as used', async () => {
    const email = uniqueEmail('verify-twice');
    await register(t, email);
    const link = linkIn(await mailTo(sink, email, VERIFY_SUBJECT));
    expect((await follow(t, link)).status).toBe(200);
    const again = await follow(t, link);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(INVALID);
  });

  it('when the token is unknown, missing or expired, then the answer is 400 INVALID_TOKEN', async () => {
    const email = uniqueEmail('verify-expired');
    await register(t, email);
    const link = linkIn(await mailTo(sink, email, VERIFY_SUBJECT));
    await t.app.models.AuthToken.update({ expires_at: new Date(Date.now() - 1000) }, { where: { identifier: email, kind: 'verify_email' } });
    for (const path of [link.pathname + link.search, '/auth/token/verify?token=vfy_nope', '/auth/token/verify']) {
      const r = await t.request('GET', path);
      expect(r.status, path).toBe(400);
      expect(r.body).toEqual(INVALID);
    }
    expect((await t.app.repos.users.findByEmail(email))?.is_verified).toBe(false);
  });

  it("when the user's language is Spanish, then the verification mail arrives in Spanish", async () => {
    const email = uniqueEmail('verify-es');
    await register(t, email, { lang: 'es' });
    const mail = await mailTo(sink, email, /Verifica tu correo en Gatehouse/);
    expect(mail.subject).toBe('Verifica tu correo en Gatehouse');
    expect(mail.text).toContain('Hola, Ana:');
  });

  it('when a redirect URL is configured, then the link redirects with verified=1, or verified=0 when bad', async () => {
    const email = uniqueEmail('verify-redirect');
    await register(redirecting, email);
    const link = linkIn(await mailTo(sink, email, VERIFY_SUBJECT));
    const ok = await follow(redirecting, link);
    expect(ok.status).toBe(302);
    const target = new URL(ok.headers.get('location')!);
    expect(target.origin + target.pathname).toBe('https://app.example.test/welcome');
    expect(Object.fromEntries(target.searchParams)).toEqual({ from: 'mail', verified: '1' });

    const bad = await follow(redirecting, link);
    expect(bad.status).toBe(302);
    const badTarget = new URL(bad.headers.get('location')!);
    expect(Object.fromEntries(badTarget.searchParams)).toEqual({ from: 'mail', verified: '0', error: 'invalid_token' });
    expect(bad.headers.get('location')).not.toContain('token=');
  });
});

describe('registration without required verification', () => {
  it('when verification is not required, then registering sends no mail, yet a requested link still verifies', async () => {
    const email = uniqueEmail('lenient');
    const reg = await register(lenient, email);
    expect(reg.status).toBe(200);
    expect(reg.body.data.session_id).toMatch(/^ses_/);
    expect(mailsTo(sink, email)).toHaveLength(0);

    await lenient.request('POST', '/auth/resend-verification', { body: { email } });
    const link = linkIn(await mailTo(sink, email, VERIFY_SUBJECT));
    expect((await follow(lenient, link)).status).toBe(200);
    expect((await lenient.app.repos.users.findByEmail(email))?.is_verified).toBe(true);
  });
});

describe('POST /auth/resend-verification', () => {
  it('when the address is unknown, verified or unverified, then the answer is the same and only the unverified one gets mail', async () => {
    const unverified = await makeUser(t, { email: uniqueEmail('resend-unv'), is_verified: false });
    const verified = await makeUser(t, { email: uniqueEmail('resend-ver'), is_verified: true });
    const unknown = uniqueEmail('resend-unknown');

    const answers = [];
    for (const email of [unknown, verified.email, unverified.email]) {
      const r = await t.request('POST', '/auth/resend-verification', { body: { email } });
      answers.push({ status: r.status, body: r.body });
    }
    for (const a of answers) expect(a).toEqual({ status: 200, body: RESEND_ANSWER });

    const mail = await mailTo(sink, unverified.email, VERIFY_SUBJECT);
    expect((await follow(t, linkIn(mail))).status).toBe(200);
    // Sending is in-band: by the time the answers came back, any mail had been accepted by the sink.
    expect(mailsTo(sink, unknown)).toHaveLength(0);
    expect(mailsTo(sink, verified.email)).toHaveLength(0);
  });

  it('when a new link is requested, then the earlier link no longer works', async () => {
    const user = await makeUser(t, { email: uniqueEmail('resend-newer'), is_verified: false });
    await t.request('POST', '/auth/resend-verification', { body: { email: user.email } });
    const first = linkIn(await mailTo(sink, user.email, VERIFY_SUBJECT));
    await t.request('POST', '/auth/resend-verification', { body: { email: user.email.toUpperCase() } });
    await expect.poll(() => mailsTo(sink, user.email).length).toBe(2);
    const second = linkIn(mailsTo(sink, user.email)[1]);
    expect((await follow(t, first)).status).toBe(400);
    expect((await follow(t, second)).status).toBe(200);
  });

  it('when the email changed after the link was sent, then the link does not verify the new address', async () => {
    const user = await makeUser(t, { email: uniqueEmail('resend-moved'), is_verified: false });
    await t.request('POST', '/auth/resend-verification', { body: { email: user.email } });
    const link = linkIn(await mailTo(sink, user.email, VERIFY_SUBJECT));
    await t.app.repos.users.update(user.id, { email: uniqueEmail('moved') });
    expect((await follow(t, link)).status).toBe(400);
    expect((await t.app.repos.users.findById(user.id))?.is_verified).toBe(false);
  });

  it('when the body has no valid email, then the answer is 400 VALIDATION_ERROR', async () => {
    const r = await t.request('POST', '/auth/resend-verification', { body: { email: 'not-an-address' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('VALIDATION_ERROR');
  });
});
