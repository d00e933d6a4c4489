import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { WebClient } from '../helpers/web-client.js';

/** /account offers "send the link again" to an unverified address (issue 52's quick start), and the link comes. */
describe('/account: the verification link again', () => {
  let w: AppWithMail;

  beforeAll(async () => {
    w = await startAppWithMail({ env: { WEB_PAGES: 'true', REQUIRE_EMAIL_VERIFICATION: 'false' } });
  }, 60_000);
  afterAll(async () => {
    await w?.close();
  });

  async function signedIn(verified: boolean) {
    const user = await makeUser(w.t, { email: uniqueEmail('resend'), is_verified: verified });
    const c = new WebClient(w.t.url);
    expect((await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(303);
    return { c, user };
  }

  it('an unverified account gets a button; its post mails a fresh link to its own address and says so', async () => {
    const { c, user } = await signedIn(false);
    const page = await c.get('/account');
    expect(page.text).toContain('data-resend-verification');
    const done = await c.submit('/account', '/account/email/resend', {});
    expect(done.status).toBe(303);
    expect(done.location).toBe('/account?done=verification_sent#email');
    const mail = await w.smtp.waitFor((m) => JSON.stringify(m.to).includes(user.email));
    expect(mail.html || mail.text).toMatch(/verify/i);
    expect((await c.get('/account?done=verification_sent')).text).toContain('A new verification link is on its way');
  });

  it('a verified account has no button, and a post sends nothing; without the CSRF token it is refused', async () => {
    const { c, user } = await signedIn(true);
    expect((await c.get('/account')).text).not.toContain('data-resend-verification');
    const before = w.smtp.messages.length;
    expect((await c.submit('/account', '/account/email/resend', {})).status).toBe(303);
    await new Promise((r) => setTimeout(r, 500));
    expect(w.smtp.messages.slice(before).some((m) => JSON.stringify(m.to).includes(user.email))).toBe(false);
    const forged = await c.submit('/account', '/account/email/resend', {}, { csrf: false });
    expect(forged.status).toBe(403);
  });
});
