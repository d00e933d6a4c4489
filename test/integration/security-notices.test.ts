import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { withAuditScope } from '../../src/audit/audit-scope.js';
import type { AuditActor, AuditInput } from '../../src/audit/audit-types.js';
import { eventId } from '../../src/audit/event-id.js';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { appWithMail } from '../helpers/app-with-mail.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
import type { TestApp } from '../helpers/test-app.js';
import { mailsTo, mailTo } from './flows-helpers.js';

/**
 * Security notices (src/audit/security-notices.ts) over the real SMTP sink. The events are written
 * directly, in a request-like scope, as the instrumented flows write them.
 */

const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const CHROME_MAC_NEWER = CHROME_MAC.replace('Chrome/131.0.0.0', 'Chrome/133.0.6943.98');
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const HOME = '198.51.100.20';
const HOME_NEIGHBOUR = '198.51.100.77';
const ELSEWHERE = '203.0.113.9';
const RESET_PAGE = 'https://app.example.test/reset-password';
const NEW_DEVICE = /^New sign-in to your Gatehouse account$/;
const NEW_DEVICE_ES = /^Nuevo inicio de sesión en tu cuenta de Gatehouse$/;
const DAY = 86_400_000;

const { t, smtp, others } = appWithMail({
  env: { APP_URL: 'https://app.example.test' },
  others: {
    quiet: { APP_URL: 'https://app.example.test', NEW_DEVICE_EMAILS: 'false' },
    // Two account mails per address per window, as an operator might set it.
    tight: { APP_URL: 'https://app.example.test', RATE_LIMIT_TOKEN_LOGIN: '2/10m', SUPPORT_EMAIL: 'help@example.test' },
  },
});

const selfActor = (u: UserRecord): AuditActor => ({ id: u.id, user_type: u.user_type });

/** Writes one event as a request from `ip` with `ua` would, then waits for the work after the answer. */
async function record(app: TestApp, input: AuditInput, source: { ip?: string | null; ua?: string | null; actor?: AuditActor } = {}) {
  const scope = { actor: source.actor ?? null, ip: source.ip ?? null, userAgent: source.ua ?? null, requestId: `req-${randomBytes(4).toString('hex')}` };
  const event = await withAuditScope(scope, () => app.app.services.audit.record(input));
  await app.app.services.deferred.idle();
  return event;
}

const signIn = (user: UserRecord, ip: string | null, ua: string | null, app = t) =>
  record(app, { type: 'sign_in.succeeded', userId: user.id, actor: selfActor(user), details: { method: 'password' } }, { ip, ua, actor: selfActor(user) });

/** A UUIDv7 of a past time (eventId never goes back in time: it keeps its ids in order). */
function pastId(ms: number): string {
  const h = ms.toString(16).padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}${eventId().slice(13)}`;
}

/** Writes a past sign-in straight into the record (test data), as if made `daysAgo` days ago. */
async function pastSignIn(app: TestApp, user: UserRecord, daysAgo: number, ip: string, ua: string) {
  const at = new Date(Date.now() - daysAgo * DAY);
  await app.app.repos.audit.insert({
    id: pastId(at.getTime()),
    type: 'sign_in.succeeded',
    at,
    outcome: 'success',
    actor: selfActor(user),
    user_id: user.id,
    ip,
    user_agent: ua,
    request_id: null,
    identifier: null,
    details: { method: 'password' },
  });
}

describe('new-device sign-in notice', () => {
  it('when an account signs in for the first time, then again from the same browser and network, then no mail is sent', async () => {
    const user = await makeUser(t, { email: uniqueEmail('first') });
    await signIn(user, HOME, CHROME_MAC);
    await signIn(user, HOME_NEIGHBOUR, CHROME_MAC_NEWER);
    expect(mailsTo(smtp, user.email)).toEqual([]);
  });

  it('when a known account signs in from a new browser, then one mail says what, when, from where and what to do, in English', async () => {
    const user = await makeUser(t, { email: uniqueEmail('browser'), name: 'Ana' });
    await signIn(user, HOME, CHROME_MAC);
    const event = await signIn(user, HOME, FIREFOX_LINUX);
    const mail = await mailTo(smtp, user.email, NEW_DEVICE);
    const when = `${event.at.slice(0, 16).replace('T', ' ')} UTC`;
    for (const part of [mail.text ?? '', String(mail.html)]) {
      expect(part).toContain('Ana');
      expect(part).toContain(when);
      expect(part).toContain(HOME);
      expect(part).toContain('Firefox, Linux');
      expect(part).toContain(RESET_PAGE);
    }
    expect(mail.text).toContain('If not, reset your password right away');
    expect(mail.text).toContain('tell the administrator of Gatehouse');
    // Nothing that acts: no token, code or session in a notice.
    expect(mail.text).not.toMatch(/token=|rst_|sess|\b\d{6}\b/);
    // The same browser again is known now.
    await signIn(user, HOME, FIREFOX_LINUX);
    expect(mailsTo(smtp, user.email)).toHaveLength(1);
  });

  it('when a known account signs in from a new network with the same browser, then a mail is sent, in the user’s language', async () => {
    const user = await makeUser(t, { email: uniqueEmail('network'), lang: 'es', name: 'Lucía' });
    await signIn(user, HOME, CHROME_MAC);
    await signIn(user, ELSEWHERE, CHROME_MAC);
    const mail = await mailTo(smtp, user.email, NEW_DEVICE_ES);
    expect(mail.text).toContain('Hola, Lucía:');
    expect(mail.text).toContain(`Dirección IP: ${ELSEWHERE}`);
    expect(mail.text).toContain('Dispositivo: Chrome, macOS');
    expect(mail.text).toContain(`restablece tu contraseña cuanto antes: ${RESET_PAGE}`);
  });

  it('when the device was last seen more than 90 days ago, then it is new again; within 90 days, it is known', async () => {
    const stale = await makeUser(t, { email: uniqueEmail('stale') });
    await pastSignIn(t, stale, 120, HOME, CHROME_MAC);
    await signIn(stale, HOME, CHROME_MAC);
    await mailTo(smtp, stale.email, NEW_DEVICE);

    const recent = await makeUser(t, { email: uniqueEmail('recent') });
    await pastSignIn(t, recent, 120, ELSEWHERE, FIREFOX_LINUX);
    await pastSignIn(t, recent, 60, HOME, CHROME_MAC);
    await signIn(recent, HOME_NEIGHBOUR, CHROME_MAC);
    expect(mailsTo(smtp, recent.email)).toEqual([]);
  });

  it('when failed sign-ins came before, then they neither count as the first sign-in nor make a device known', async () => {
    const user = await makeUser(t, { email: uniqueEmail('failed-first') });
    await record(t, { type: 'sign_in.failed', outcome: 'failure', userId: user.id, details: { reason: 'bad_password' } }, { ip: ELSEWHERE, ua: FIREFOX_LINUX });
    await signIn(user, HOME, CHROME_MAC);
    await record(t, { type: 'sign_in.failed', outcome: 'failure', userId: user.id, details: { reason: 'bad_password' } }, { ip: ELSEWHERE, ua: FIREFOX_LINUX });
    expect(mailsTo(smtp, user.email)).toEqual([]);
    await signIn(user, ELSEWHERE, FIREFOX_LINUX);
    await mailTo(smtp, user.email, NEW_DEVICE);
  });

  it('when NEW_DEVICE_EMAILS=false, then a sign-in from a new browser and network mails nothing', async () => {
    const quiet = others.quiet;
    const user = await makeUser(quiet, { email: uniqueEmail('quiet') });
    await signIn(user, HOME, CHROME_MAC, quiet);
    await signIn(user, ELSEWHERE, FIREFOX_LINUX, quiet);
    expect(mailsTo(smtp, user.email)).toEqual([]);
    // Other notices still go out.
    await record(quiet, { type: 'password.changed', userId: user.id }, { ip: ELSEWHERE, ua: FIREFOX_LINUX, actor: selfActor(user) });
    await mailTo(smtp, user.email, /^Your Gatehouse password was changed$/);
  });

  it('when the account is disabled or deleted, then no notice is sent', async () => {
    const disabled = await makeUser(t, { email: uniqueEmail('disabled'), disabled_at: new Date() });
    await pastSignIn(t, disabled, 10, HOME, CHROME_MAC);
    await signIn(disabled, ELSEWHERE, FIREFOX_LINUX);
    await record(t, { type: 'password.reset', userId: disabled.id }, { ip: ELSEWHERE, ua: FIREFOX_LINUX });
    const deleted = await makeUser(t, { email: uniqueEmail('deleted'), deleted_at: new Date() });
    await record(t, { type: 'two_factor.reset', userId: deleted.id }, { actor: { via: 'cli' } });
    expect(mailsTo(smtp, disabled.email)).toEqual([]);
    expect(mailsTo(smtp, deleted.email)).toEqual([]);
  });
});

describe('change notices', () => {
  const CASES: { type: string; details?: Record<string, unknown>; subject: RegExp; says: string }[] = [
    { type: 'password.changed', subject: /^Your Gatehouse password was changed$/, says: 'The password of your Gatehouse account was changed.' },
    { type: 'password.reset', subject: /^Your Gatehouse password was reset$/, says: 'was reset with a link sent to its email address' },
    {
      type: 'email.changed',
      subject: /^The email address of your Gatehouse account was changed$/,
      says: 'The email address of your Gatehouse account was changed.',
    },
    {
      type: 'two_factor.disabled',
      subject: /^Two-factor authentication was turned off on your Gatehouse account$/,
      says: 'Signing in now needs only your password.',
    },
    { type: 'two_factor.reset', subject: /^The second factor of your Gatehouse account was removed$/, says: 'An administrator removed the second factor' },
    {
      type: 'social.linked',
      details: { provider: 'github' },
      subject: /^A GitHub account was linked to your Gatehouse account$/,
      says: 'it can now be used to sign in',
    },
    {
      type: 'social.unlinked',
      details: { provider: 'google' },
      subject: /^A Google account was unlinked from your Gatehouse account$/,
      says: 'it can no longer be used to sign in',
    },
  ];

  it.each(CASES)('when $type is recorded, then the user gets its mail with time, place, device and advice', async ({ type, details, subject, says }) => {
    const user = await makeUser(t, { email: uniqueEmail(type.replace('.', '-')) });
    const event = await record(t, { type, userId: user.id, details }, { ip: ELSEWHERE, ua: FIREFOX_LINUX, actor: selfActor(user) });
    const mail = await mailTo(smtp, user.email, subject);
    expect(mail.text).toContain(says);
    expect(mail.text).toContain(`When: ${event.at.slice(0, 16).replace('T', ' ')} UTC`);
    expect(mail.text).toContain(`IP address: ${ELSEWHERE}`);
    expect(mail.text).toContain('Device: Firefox, Linux');
    expect(mail.text).toContain(`If not, reset your password right away: ${RESET_PAGE}`);
    expect(mailsTo(smtp, user.email)).toHaveLength(1);
  });

  it('when an admin changes the password, then the mail says an administrator did it; a failed change mails nothing', async () => {
    const admin = await makeUser(t, { user_type: 'admin' });
    const user = await makeUser(t, { email: uniqueEmail('by-admin'), lang: 'es' });
    await record(t, { type: 'password.changed', userId: user.id, outcome: 'failure' }, { ip: HOME, actor: selfActor(admin) });
    expect(mailsTo(smtp, user.email)).toEqual([]);
    await record(t, { type: 'password.changed', userId: user.id }, { ip: HOME, ua: CHROME_MAC, actor: selfActor(admin) });
    const mail = await mailTo(smtp, user.email, /^Se cambió tu contraseña de Gatehouse$/);
    expect(mail.text).toContain('se cambió por un administrador.');
  });

  it.each(['identifier', 'previous_email'])(
    'when the email changed and the event names the previous address (details.%s), then both addresses are told, the old one where the account went (masked)',
    async (key) => {
      const user = await makeUser(t, { email: uniqueEmail('moved') });
      const previous = uniqueEmail('old-address');
      await record(t, { type: 'email.changed', userId: user.id, details: { [key]: previous } }, { ip: ELSEWHERE, ua: CHROME_MAC, actor: selfActor(user) });
      const toNew = await mailTo(smtp, user.email, /email address of your Gatehouse account was changed/);
      const toOld = await mailTo(smtp, previous, /email address of your Gatehouse account was changed/);
      expect(toOld.text).toContain(`to ${user.email[0]}***@example.test. Mail about the account no longer comes to this address.`);
      expect(toOld.text).not.toContain(user.email);
      expect(toNew.text).not.toContain('no longer comes to this address');
    },
  );

  it('when the same address gets more notices than the account-mail budget allows, then the rest are dropped, the support address is named and reset links still go out', async () => {
    const tight = others.tight;
    const user = await makeUser(tight, { email: uniqueEmail('flooded') });
    await pastSignIn(tight, user, 30, HOME, CHROME_MAC);
    for (const ip of ['192.0.2.1', '192.0.2.129', '198.18.0.1', '198.18.1.1']) await signIn(user, ip, FIREFOX_LINUX, tight);
    await record(tight, { type: 'password.changed', userId: user.id }, { ip: HOME, ua: CHROME_MAC, actor: selfActor(user) });
    const got = mailsTo(smtp, user.email);
    expect(got).toHaveLength(2);
    expect(got[0].text).toContain('Then write to help@example.test so we can check your account.');
    // Notices count apart: the owner can still get a reset link.
    expect((await tight.request('POST', '/auth/password-reset/request', { body: { email: user.email } })).status).toBe(200);
    await mailTo(smtp, user.email, /^Reset your Gatehouse password$/);
  });
});
