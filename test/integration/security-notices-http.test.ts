import { describe, expect, it } from 'vitest';
import { appWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { mailsTo, mailTo } from './flows-helpers.js';

/**
 * Security notices end to end: the real flows over HTTP record their events (sign-in seam, password
 * flows), and the notice follows from the event. Needs the flows' instrumentation (sign_in.succeeded,
 * password.changed).
 */

const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const NEW_DEVICE = /^New sign-in to your Gatehouse account$/;

const { t, smtp } = appWithMail({ env: { APP_URL: 'https://app.example.test' } });

async function login(email: string, ua: string, password = DEFAULT_PASSWORD) {
  const r = await t.request('POST', '/auth/login', { body: { email, password }, headers: { 'User-Agent': ua } });
  expect(r.status).toBe(200);
  await t.app.services.deferred.idle();
  return r;
}

describe('security notices over HTTP', () => {
  it('when a user signs in for the first time, again from the same browser, then from another, then only the last one mails', async () => {
    const user = await makeUser(t, { email: uniqueEmail('http-device'), name: 'Ana' });
    await login(user.email, CHROME_MAC);
    await login(user.email, CHROME_MAC);
    expect(mailsTo(smtp, user.email)).toEqual([]);
    await login(user.email, FIREFOX_LINUX);
    const mail = await mailTo(smtp, user.email, NEW_DEVICE);
    expect(mail.text).toContain('Device: Firefox, Linux');
    expect(mail.text).toContain('IP address: 127.0.0.1');
    expect(mail.text).toContain('https://app.example.test/reset-password');
    expect(mailsTo(smtp, user.email)).toHaveLength(1);
  });

  it('when a user changes their password over HTTP, then one notice says when, from where and what to do', async () => {
    const user = await makeUser(t, { email: uniqueEmail('http-password'), lang: 'es' });
    const { body } = await login(user.email, CHROME_MAC);
    const r = await t.request('POST', '/auth/password-change/self', {
      session: body.session_id as string,
      body: { current_password: DEFAULT_PASSWORD, new_password: 'Brand-New-Secret-77' },
      headers: { 'User-Agent': CHROME_MAC },
    });
    expect(r.status).toBe(200);
    const mail = await mailTo(smtp, user.email, /^Se cambió tu contraseña de Gatehouse$/);
    expect(mail.text).toContain('Dirección IP: 127.0.0.1');
    expect(mail.text).toContain('Dispositivo: Chrome, macOS');
    expect(mail.text).not.toContain(body.session_id as string);
    await t.app.services.deferred.idle();
    expect(mailsTo(smtp, user.email)).toHaveLength(1);
  });
});
