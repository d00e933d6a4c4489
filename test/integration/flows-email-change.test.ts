import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appWithMail } from '../helpers/app-with-mail.js';
import { BACKEND } from '../helpers/backend.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { follow, linkIn, mailsTo, mailTo as mailToWithin, tokenIn } from './flows-helpers.js';

/** Self-service email change (docs/email-change.md): POST /auth/user/me/email, then the link mailed to the new address. */

const { t, smtp } = appWithMail();

const NEUTRAL = {
  success: true,
  message: 'If the new address can be used, a confirmation link has been sent to it. Your address changes once it is opened.',
  expires_in: 3600,
};
const CONFIRM_SUBJECT = /^Confirm your new email address for Gatehouse$/;
const IN_USE_SUBJECT = /^Someone tried to use your address on Gatehouse$/;
const REQUESTED_SUBJECT = /^A change of the email address of your Gatehouse account was requested$/;
const CHANGED_SUBJECT = /^The email address of your Gatehouse account was changed$/;

/** Mail goes out after the answer: on a loaded machine it may take a while. */
const PATIENCE = { timeout: 15_000, interval: 50 };
const mailTo = (sink: typeof smtp, address: string, subject: RegExp) => mailToWithin(sink, address, subject, PATIENCE.timeout);
/** The first mail to `address` with this subject among those after the first `before`. */
async function nextMailTo(address: string, subject: RegExp, before: number) {
  const find = () =>
    mailsTo(smtp, address)
      .slice(before)
      .find((m) => subject.test(m.subject ?? ''));
  await expect.poll(find, PATIENCE).toBeDefined();
  return find()!;
}

const ask = (app: TestApp, session: string, body: Record<string, unknown>) => app.request('POST', '/auth/user/me/email', { session, body });
const confirm = (app: TestApp, token: string) => app.request('POST', '/auth/user/me/email/confirm', { body: { token } });
const alive = async (app: TestApp, session: string) => (await app.request('GET', '/auth/validation', { session })).status === 200;
const login = (email: string) => t.request('POST', '/auth/login', { body: { email, password: DEFAULT_PASSWORD } });
const stored = (id: string) => t.app.repos.users.findById(id);
const events = async (userId: string) => (await t.app.services.audit.list({ userId, limit: 200 })).events.reverse();
const liveChangeTokens = async (userId: string) =>
  (await t.app.repos.authTokens.listByUser(userId)).filter((r) => r.kind === 'email_change' && !r.used_at && r.expires_at.getTime() > Date.now());

/** Asks for `to` as the user and returns the link mailed there. */
async function requestLink(session: string, to: string): Promise<URL> {
  const before = mailsTo(smtp, to).length;
  const r = await ask(t, session, { new_email: to, password: DEFAULT_PASSWORD });
  expect(r.status).toBe(200);
  expect(r.body).toEqual(NEUTRAL);
  return linkIn(await nextMailTo(to, /Gatehouse/, before));
}

describe('POST /auth/user/me/email, then the link', () => {
  it('when the password is right and the address free, then a link goes to the new address, the old one is told, and the link moves the account', async () => {
    const { user, token: mine } = await makeSession(t, { email: uniqueEmail('mover'), name: 'Ana', is_verified: false });
    const other = (await t.app.services.sessions.create(user.id, { ip: '127.0.0.1', userAgent: 'vitest' })).token;
    const to = uniqueEmail('moved');
    const link = await requestLink(mine, to);
    expect(link.pathname).toBe('/auth/user/me/email/confirm');
    expect(tokenIn(link)).toMatch(/^eml_/);
    const mail = await mailTo(smtp, to, CONFIRM_SUBJECT);
    expect(mail.text).toContain('Ana');
    expect(mail.text).toContain(`${user.email[0]}***@example.test`);
    // The current address is told where the account is asked to go (masked), before anything changed.
    const notice = await mailTo(smtp, user.email, REQUESTED_SUBJECT);
    expect(notice.text).toContain(`${to[0]}***@example.test`);
    expect(notice.text).not.toContain(to);
    expect((await stored(user.id))!.email).toBe(user.email);

    const r = await confirm(t, tokenIn(link));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: 'Email address changed', email: to });
    const after = (await stored(user.id))!;
    expect(after.email).toBe(to);
    expect(after.is_verified).toBe(true);
    // The session that asked stays, every other one ends.
    expect(await alive(t, mine)).toBe(true);
    expect(await alive(t, other)).toBe(false);
    expect((await login(to)).status).toBe(200);
    expect((await login(user.email)).status).toBe(401);
    const me = await t.request('GET', '/auth/user/me', { session: mine, bridge: true });
    expect(me.body.user).toMatchObject({ email: to, is_verified: true });

    // Both addresses get the notice of the change; the old one learns where the account went (masked).
    const toNew = await mailTo(smtp, to, CHANGED_SUBJECT);
    expect(toNew.text).not.toContain('by an administrator');
    const toOld = await mailTo(smtp, user.email, CHANGED_SUBJECT);
    expect(toOld.text).toContain(`${to[0]}***@example.test`);

    const ev = await events(user.id);
    const requested = ev.find((e) => e.type === 'email.change_requested')!;
    expect(requested).toMatchObject({ outcome: 'success', actor: { id: user.id }, details: { identifier: to } });
    const changed = ev.find((e) => e.type === 'email.changed')!;
    expect(changed).toMatchObject({ actor: { id: user.id }, details: { identifier: user.email, by: 'self', via: 'confirmation_link' } });
    expect(ev.find((e) => e.type === 'email.verified')?.details).toEqual({ via: 'email_change' });
    expect(ev.find((e) => e.type === 'session.revoked')?.details).toMatchObject({ by: 'user', count: 1, reason: 'email.changed' });
    // Nothing of the token in any event.
    expect(JSON.stringify(ev)).not.toContain(tokenIn(link));

    // Single use.
    const again = await confirm(t, tokenIn(link));
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ success: false, error: 'Invalid or expired token', code: 'INVALID_TOKEN' });
  });

  it('when the mailed link is opened as it is (GET, WEB_PAGES off), then it confirms; mails follow the user language', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('link'), lang: 'es', name: 'Lucía' });
    const to = uniqueEmail('link-new');
    const r = await ask(t, token, { newEmail: to, currentPassword: DEFAULT_PASSWORD });
    expect(r.body).toEqual(NEUTRAL);
    const mail = await mailTo(smtp, to, /^Confirma tu nuevo correo en Gatehouse$/);
    await mailTo(smtp, user.email, /^Se pidió cambiar el correo de tu cuenta de Gatehouse$/);
    const opened = await follow(t, linkIn(mail));
    expect(opened.status).toBe(200);
    expect(opened.body.email).toBe(to);
    expect((await stored(user.id))!.email).toBe(to);
    await mailTo(smtp, user.email, /^Se cambió el correo de tu cuenta de Gatehouse$/);
    const missing = await t.request('GET', '/auth/user/me/email/confirm');
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('INVALID_TOKEN');
  });

  it('when the new address belongs to another account, then the answer is the same, its owner gets an "in use" mail and nothing changes', async () => {
    const holder = await makeUser(t, { email: uniqueEmail('holder'), lang: 'en' });
    const { user, token } = await makeSession(t, { email: uniqueEmail('prober') });
    const free = uniqueEmail('free');
    const onFree = await ask(t, token, { new_email: free, password: DEFAULT_PASSWORD });
    const before = mailsTo(smtp, holder.email).length;
    const onTaken = await ask(t, token, { new_email: holder.email.toUpperCase(), password: DEFAULT_PASSWORD });
    expect(onTaken.status).toBe(onFree.status);
    expect(onTaken.body).toEqual(onFree.body);
    expect(onTaken.headers.get('content-length')).toBe(onFree.headers.get('content-length'));
    const inUse = await nextMailTo(holder.email, IN_USE_SUBJECT, before);
    expect(inUse.text).toContain('/reset-password');
    expect(inUse.text).not.toMatch(/token=/);
    expect(inUse.text).not.toContain(user.email);
    // The prober's current address is told of both requests, alike.
    await expect.poll(() => mailsTo(smtp, user.email).filter((m) => REQUESTED_SUBJECT.test(m.subject ?? '')).length, PATIENCE).toBe(2);
    // The newer request voided the link to the free address too: no trace tells the two apart.
    await expect
      .poll(async () => (await t.app.repos.authTokens.listByUser(user.id)).filter((r) => r.kind === 'email_change' && r.used_at).length, PATIENCE)
      .toBe(1);
    expect(await liveChangeTokens(user.id)).toEqual([]);
    expect(mailsTo(smtp, holder.email).filter((m) => CONFIRM_SUBJECT.test(m.subject ?? ''))).toEqual([]);
    expect((await stored(user.id))!.email).toBe(user.email);
    expect((await stored(holder.id))!.email).toBe(holder.email);
    // Both requests are recorded the same way.
    await expect.poll(async () => (await events(user.id)).filter((e) => e.type === 'email.change_requested').length, PATIENCE).toBe(2);
  });

  it('when the password is wrong, then 400 INVALID_CURRENT_PASSWORD, as the password change answers, and nothing is sent', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('wrong') });
    const to = uniqueEmail('wrong-new');
    const r = await ask(t, token, { new_email: to, password: 'Not-My-Password-1' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, error: 'Current password is incorrect', code: 'INVALID_CURRENT_PASSWORD' });
    expect(r.body.details).toEqual([{ field: 'password', message: 'incorrect' }]);
    await t.app.services.deferred.idle();
    expect(mailsTo(smtp, to)).toEqual([]);
    expect(mailsTo(smtp, user.email)).toEqual([]);
    expect(await liveChangeTokens(user.id)).toEqual([]);
    expect((await events(user.id)).map((e) => e.type)).not.toContain('email.change_requested');
  });

  it('when the input is bad, then 400 with a code naming the field, and nothing is sent', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('bad-input') });
    const cases: [Record<string, unknown>, string, string | null][] = [
      [{ password: DEFAULT_PASSWORD }, 'VALIDATION_ERROR', 'new_email'],
      [{ new_email: '', password: DEFAULT_PASSWORD }, 'VALIDATION_ERROR', 'new_email'],
      [{ new_email: 'not-an-email', password: DEFAULT_PASSWORD }, 'VALIDATION_ERROR', 'new_email'],
      [{ new_email: `${'a'.repeat(250)}@example.test`, password: DEFAULT_PASSWORD }, 'VALIDATION_ERROR', 'new_email'],
      [{ new_email: ` ${user.email.toUpperCase()} `, password: DEFAULT_PASSWORD }, 'EMAIL_UNCHANGED', 'new_email'],
      [{ new_email: uniqueEmail('no-pw') }, 'VALIDATION_ERROR', 'password'],
      [{ new_email: 42, password: DEFAULT_PASSWORD }, 'VALIDATION_ERROR', 'new_email'],
      [{ new_email: uniqueEmail('x'), password: 'x'.repeat(1001) }, 'VALIDATION_ERROR', 'password'],
    ];
    for (const [body, code, field] of cases) {
      const r = await ask(t, token, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.body).toMatchObject({ success: false, code });
      expect(r.body.details?.[0]?.field, JSON.stringify(body).slice(0, 80)).toBe(field);
    }
    const notJson = await t.request('POST', '/auth/user/me/email', { session: token, raw: '{', headers: { 'Content-Type': 'application/json' } });
    expect(notJson.status).toBe(400);
    await t.app.services.deferred.idle();
    expect(await liveChangeTokens(user.id)).toEqual([]);
    expect(mailsTo(smtp, user.email)).toEqual([]);
  });

  it('when there is no session or only a pending two-factor one, then 401', async () => {
    const user = await makeUser(t, { email: uniqueEmail('pending') });
    const { token: pending } = await t.app.services.sessions.create(user.id, { status: 'pending_2fa' });
    const body = { new_email: uniqueEmail('pending-new'), password: DEFAULT_PASSWORD };
    expect((await t.request('POST', '/auth/user/me/email', { body })).status).toBe(401);
    expect((await ask(t, pending, body)).status).toBe(401);
    await t.app.services.deferred.idle();
    expect(mailsTo(smtp, body.new_email)).toEqual([]);
  });

  it('when the account has no password (social sign-in only), then 400 PASSWORD_NOT_SET: it sets one by a reset link first', async () => {
    const user = await makeUser(t, { email: uniqueEmail('social-only') });
    await t.app.repos.users.update(user.id, { password_hash: null });
    const { token } = await t.app.services.sessions.create(user.id);
    const r = await ask(t, token, { new_email: uniqueEmail('social-new'), password: 'anything-at-all' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, code: 'PASSWORD_NOT_SET' });
  });
});

describe('what makes a link stop working', () => {
  it('when the link has expired, then INVALID_TOKEN and the address stays', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('expired') });
    const link = await requestLink(token, uniqueEmail('expired-new'));
    await t.app.models.AuthToken.update({ expires_at: new Date(Date.now() - 1000) }, { where: { user_id: user.id, kind: 'email_change' } });
    const r = await confirm(t, tokenIn(link));
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('INVALID_TOKEN');
    expect((await stored(user.id))!.email).toBe(user.email);
  });

  it('when a newer change was asked for, then only the newest link works', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('twice') });
    const first = await requestLink(token, uniqueEmail('first'));
    const secondAddress = uniqueEmail('second');
    const second = await requestLink(token, secondAddress);
    expect((await confirm(t, tokenIn(first))).status).toBe(400);
    expect((await confirm(t, tokenIn(second))).status).toBe(200);
    expect((await stored(user.id))!.email).toBe(secondAddress);
  });

  it('when another account asks for the same address, then the first link is not voided by it', async () => {
    const a = await makeSession(t, { email: uniqueEmail('first-asker') });
    const b = await makeSession(t, { email: uniqueEmail('second-asker') });
    const wanted = uniqueEmail('wanted');
    const linkA = await requestLink(a.token, wanted);
    await requestLink(b.token, wanted);
    expect((await confirm(t, tokenIn(linkA))).status).toBe(200);
  });

  it('when the password changes after the request (the owner taking the account back), then the link is void', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('takeback') });
    const link = await requestLink(token, uniqueEmail('attacker'));
    await new Promise((r) => setTimeout(r, 5));
    await t.app.services.users.setPassword(user.id, 'Taken-Back-Secret-9');
    const r = await confirm(t, tokenIn(link));
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('INVALID_TOKEN');
    expect((await stored(user.id))!.email).toBe(user.email);
  });

  it('when the address was changed another way since (an admin), then the link is void', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('admin-moved') });
    const link = await requestLink(token, uniqueEmail('asked'));
    const byAdmin = uniqueEmail('by-admin');
    await t.app.services.users.adminUpdate(null, user.id, { email: byAdmin });
    expect((await confirm(t, tokenIn(link))).status).toBe(400);
    expect((await stored(user.id))!.email).toBe(byAdmin);
  });

  it('when another account took the address between the request and the link, then 409 EMAIL_TAKEN and no half-written change', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('late') });
    const wanted = uniqueEmail('contested');
    const link = await requestLink(token, wanted);
    await makeUser(t, { email: wanted });
    const r = await confirm(t, tokenIn(link));
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ success: false, code: 'EMAIL_TAKEN' });
    expect((await stored(user.id))!.email).toBe(user.email);
    expect(await alive(t, token)).toBe(true);
    expect((await events(user.id)).map((e) => e.type)).not.toContain('email.changed');
  });

  it('when two accounts confirm the same address at once, then one moves and the other gets 409 with nothing written', async () => {
    const a = await makeSession(t, { email: uniqueEmail('racer-a') });
    const b = await makeSession(t, { email: uniqueEmail('racer-b') });
    const wanted = uniqueEmail('raced');
    const linkA = await requestLink(a.token, wanted);
    const linkB = await requestLink(b.token, wanted);
    const answers = await Promise.all([confirm(t, tokenIn(linkA)), confirm(t, tokenIn(linkB))]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const [winner, loser] = answers[0].status === 200 ? [a, b] : [b, a];
    expect((await stored(winner.user.id))!.email).toBe(wanted);
    expect((await stored(loser.user.id))!.email).toBe(loser.user.email);
    expect((await events(loser.user.id)).map((e) => e.type)).not.toContain('email.changed');
    expect(await alive(t, loser.token)).toBe(true);
  });
});

describe('limits', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ env: { RATE_LIMIT_LOGIN: '3/1h', RATE_LIMIT_EMAIL_CHANGE: '4/1h' } });
  });
  afterAll(async () => limited?.close());

  it('when wrong passwords are tried, then they spend the login budget the password change spends; bad input spends none', async () => {
    const { token } = await makeSession(limited, { email: uniqueEmail('guess') });
    const guess = (password: string) => ask(limited, token, { new_email: uniqueEmail('g'), password });
    expect((await ask(limited, token, { new_email: 'nope' })).status).toBe(400);
    expect((await guess('wrong-1')).status).toBe(400);
    expect((await guess('wrong-2')).status).toBe(400);
    const change = await limited.request('POST', '/auth/password-change/self', {
      session: token,
      body: { current_password: 'wrong-3', new_password: 'Another-Secret-88' },
    });
    expect(change.status).toBe(400);
    // The fourth guess, through either route, is refused before any password is checked.
    const refused = await guess(DEFAULT_PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, code: 'RATE_LIMITED' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('when one session asks too often, then its email-change budget refuses it; another session has its own', async () => {
    const { user, token } = await makeSession(limited, { email: uniqueEmail('often') });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await ask(limited, token, { new_email: 'bad' })).status);
    expect(statuses).toEqual([400, 400, 400, 400, 429]);
    const fresh = (await limited.app.services.sessions.create(user.id)).token;
    expect((await ask(limited, fresh, { new_email: 'bad' })).status).toBe(400);
  });
});

describe(BACKEND === 'pg' ? 'two instances sharing PostgreSQL and Redis' : 'the embedded default (one instance)', () => {
  let b: TestApp;
  beforeAll(async () => {
    b = BACKEND === 'pg' ? await startTestApp({ sharing: t }) : t;
  });
  afterAll(async () => {
    if (b && b !== t) await b.close();
  });

  it('when the change is confirmed on A, then B, which had the user cached, serves the new address at once', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('cached') });
    const validateOnB = () => b.request('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: token } });
    expect((await validateOnB()).body.user.email).toBe(user.email);
    expect((await validateOnB()).body.cached).toBe(true);
    const to = uniqueEmail('cached-new');
    const link = await requestLink(token, to);
    expect((await confirm(t, tokenIn(link))).status).toBe(200);
    await expect.poll(async () => (await validateOnB()).body.user?.email, { timeout: 2000, interval: 20 }).toBe(to);
  });
});
