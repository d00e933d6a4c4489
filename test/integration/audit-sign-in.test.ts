import { randomBytes } from 'node:crypto';
import { AppError } from '../../src/errors/app-error.js';
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/audit/audit-types.js';
import { appWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail, userServiceFailingRevocation } from '../helpers/factories.js';
import type { TestApp } from '../helpers/test-app.js';
import { codeIn, follow, linkIn, mailTo, tokenIn } from './flows-helpers.js';

/**
 * The security events of signing in and of credentials, each read back after the real flow over HTTP:
 * type, outcome, actor, user, address, request id and details, and no secret anywhere in the row.
 */

const env = { RESET_URL_ALLOWLIST: 'https://app.example.test' };
const {
  t,
  smtp,
  others: { limited, verifying },
} = appWithMail({
  env,
  others: {
    limited: { ...env, RATE_LIMIT_LOGIN: '2/1m' },
    verifying: { ...env, REQUIRE_EMAIL_VERIFICATION: 'true' },
  },
});

const NEW_PASSWORD = 'Another-Horse-77';
const rid = () => `rid-${randomBytes(6).toString('hex')}`;

async function eventsOf(app: TestApp, userId: string, type: string): Promise<AuditEvent[]> {
  return (await app.app.services.audit.list({ userId, types: [type] })).events;
}

/** The one event of `type` about the user (waited for: refusals are written after the answer). */
async function oneEvent(app: TestApp, userId: string, type: string): Promise<AuditEvent> {
  await expect.poll(async () => (await eventsOf(app, userId, type)).length, { timeout: 5000 }).toBe(1);
  return (await eventsOf(app, userId, type))[0];
}

/** The stored row, every column, as the database has it: none of `secrets` may appear in it. */
async function expectNoSecrets(app: TestApp, e: AuditEvent, secrets: string[]): Promise<void> {
  const [rows] = await app.app.sequelize.query('SELECT * FROM audit_events WHERE id = ?', { replacements: [e.id] });
  expect(rows).toHaveLength(1);
  const raw = JSON.stringify(rows);
  for (const s of secrets) expect(raw, `the row holds ${s}`).not.toContain(s);
}

/** Where the event came from: this test's client (127.0.0.1) and request. */
function expectSource(e: AuditEvent, requestId: string): void {
  expect(e.ip).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  expect(e.request_id).toBe(requestId);
}

const login = (app: TestApp, email: string, password: string, requestId: string) =>
  app.request('POST', '/auth/login', { body: { email, password }, headers: { 'X-Request-ID': requestId, 'User-Agent': 'AuditTest/1.0' } });

describe('sign-in events', () => {
  it('when a user signs in with their password, then sign_in.succeeded names them as actor, the method and the session by its prefix only', async () => {
    const user = await makeUser(t, { email: uniqueEmail('au-ok') });
    const id = rid();
    const r = await login(t, user.email, DEFAULT_PASSWORD, id);
    expect(r.status).toBe(200);
    const token = r.body.session_id as string;
    const e = await oneEvent(t, user.id, 'sign_in.succeeded');
    expect(e).toMatchObject({ outcome: 'success', user_id: user.id, actor: { id: user.id, user_type: 'customer' }, user_agent: 'AuditTest/1.0' });
    expectSource(e, id);
    expect(e.details).toEqual({ method: 'password' });
    const session = (await t.app.services.sessions.listForUser(user.id))[0];
    await expectNoSecrets(t, e, [DEFAULT_PASSWORD, token, session.id, session.token_hash]);
  });

  it('when someone registers and gets a first session, then that is a sign_in.succeeded (registration) by the new user, after user.created', async () => {
    const email = uniqueEmail('au-reg');
    const id = rid();
    const r = await t.request('POST', '/auth/register/public', {
      body: { email, password: DEFAULT_PASSWORD, name: 'New' },
      headers: { 'X-Request-ID': id, 'User-Agent': 'AuditTest/1.0' },
    });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    const user = (await t.app.repos.users.findByEmail(email))!;
    const token = r.body.data.session_id as string;
    expect(token).toBeTruthy();
    const e = await oneEvent(t, user.id, 'sign_in.succeeded');
    expect(e).toMatchObject({ actor: { id: user.id, user_type: 'customer' }, details: { method: 'password', registration: true } });
    expectSource(e, id);
    await expectNoSecrets(t, e, [DEFAULT_PASSWORD, token]);
    const all = (await t.app.services.audit.list({ userId: user.id })).events.map((x) => x.type);
    expect(all).toEqual(['sign_in.succeeded', 'user.created']);
  });

  it('when the password is wrong, then sign_in.failed (wrong_password) is recorded for the account without the password tried', async () => {
    const user = await makeUser(t, { email: uniqueEmail('au-wrong') });
    const id = rid();
    const tried = 'Wrong-Guess-123';
    expect((await login(t, user.email, tried, id)).status).toBe(401);
    const e = await oneEvent(t, user.id, 'sign_in.failed');
    expect(e).toMatchObject({ outcome: 'failure', user_id: user.id, actor: null, details: { method: 'password', reason: 'wrong_password' } });
    expectSource(e, id);
    await expectNoSecrets(t, e, [tried]);
  });

  it('when the account is unknown, then sign_in.failed has user_id null and the canonical identifier', async () => {
    const email = uniqueEmail('au-nobody');
    const id = rid();
    expect((await login(t, `  ${email.toUpperCase()} `, 'Whatever-123', id)).status).toBe(401);
    await expect
      .poll(async () => (await t.app.services.audit.list({ types: ['sign_in.failed'], limit: 200 })).events.find((e) => e.request_id === id), { timeout: 5000 })
      .toBeDefined();
    const e = (await t.app.services.audit.list({ types: ['sign_in.failed'], limit: 200 })).events.find((x) => x.request_id === id)!;
    expect(e).toMatchObject({ outcome: 'failure', user_id: null, actor: null, details: { method: 'password', reason: 'unknown_account', identifier: email } });
    expectSource(e, id);
    await expectNoSecrets(t, e, ['Whatever-123']);
  });

  it('when a disabled account signs in with the right password, then the reason is disabled', async () => {
    const user = await makeUser(t, { email: uniqueEmail('au-off'), disabled_at: new Date() });
    expect((await login(t, user.email, DEFAULT_PASSWORD, rid())).status).toBe(401);
    expect((await oneEvent(t, user.id, 'sign_in.failed')).details).toMatchObject({ reason: 'disabled' });
  });

  it('when the address is not verified and verification is required, then the reason is unverified', async () => {
    const user = await makeUser(verifying, { email: uniqueEmail('au-unv'), is_verified: false });
    expect((await login(verifying, user.email, DEFAULT_PASSWORD, rid())).status).toBe(403);
    expect((await oneEvent(verifying, user.id, 'sign_in.failed')).details).toMatchObject({ method: 'password', reason: 'unverified' });
  });

  it('when the per-address login limit refuses, then sign_in.throttled is recorded with the request as its source', async () => {
    const id = rid();
    const email = uniqueEmail('au-thr');
    for (let i = 0; i < 2; i++) await login(limited, email, 'Whatever-123', rid());
    expect((await login(limited, email, 'Whatever-123', id)).status).toBe(429);
    const find = async () => (await limited.app.services.audit.list({ types: ['sign_in.throttled'] })).events.find((e) => e.request_id === id);
    await expect.poll(find, { timeout: 5000 }).toBeDefined();
    const e = (await find())!;
    expect(e).toMatchObject({ outcome: 'failure', actor: null, user_id: null, details: { method: 'password', limit: 'login' } });
    expectSource(e, id);
    // A flood the limit turns away is not a flood of writes: the same source and limit, once a minute.
    for (let i = 0; i < 20; i++) expect((await login(limited, email, 'Whatever-123', rid())).status).toBe(429);
    await limited.app.services.deferred.idle();
    const throttled = (await limited.app.services.audit.list({ types: ['sign_in.throttled'], limit: 200 })).events;
    expect(throttled.filter((x) => x.ip === e.ip && x.details.limit === 'login')).toHaveLength(1);
  });

  it('when an auth.sign_in.before hook refuses, then sign_in.failed (refused) and no sign_in.succeeded', async () => {
    const user = await makeUser(t, { email: uniqueEmail('au-hook') });
    const off = t.app.hooks.on(
      'auth.sign_in.before',
      () => {
        throw new AppError(403, 'ACCOUNT_LOCKED', 'Locked by policy');
      },
      'test',
      ({ user: u }) => u.id === user.id,
    );
    const id = rid();
    const r = await login(t, user.email, DEFAULT_PASSWORD, id).finally(off);
    expect(r.status).toBe(403);
    const e = await oneEvent(t, user.id, 'sign_in.failed');
    expect(e).toMatchObject({ outcome: 'failure', user_id: user.id, details: { method: 'password', reason: 'refused' } });
    expectSource(e, id);
    expect(await eventsOf(t, user.id, 'sign_in.succeeded')).toEqual([]);
  });

  it('when the account backoff refuses after repeated wrong passwords, then sign_in.throttled names the account by its identifier', async () => {
    const user = await makeUser(t, { email: uniqueEmail('au-backoff') });
    let refusedId: string | null = null;
    for (let i = 0; i < 10 && !refusedId; i++) {
      const id = rid();
      if ((await login(t, user.email, 'Wrong-Guess-123', id)).status === 429) refusedId = id;
    }
    expect(refusedId).not.toBeNull();
    const find = async () => (await t.app.services.audit.list({ types: ['sign_in.throttled'], limit: 200 })).events.find((e) => e.request_id === refusedId);
    await expect.poll(find, { timeout: 5000 }).toBeDefined();
    const e = (await find())!;
    expect(e).toMatchObject({ outcome: 'failure', actor: null, details: { method: 'password', limit: 'account_backoff', identifier: user.email } });
    expectSource(e, refusedId!);
    await expectNoSecrets(t, e, ['Wrong-Guess-123']);
  });
});

describe('token sign-in events', () => {
  it('when the mailed code is used, then sign_in.succeeded says token; a wrong code before it is sign_in.failed invalid_token named by the address', async () => {
    const user = await makeUser(t, { email: uniqueEmail('au-tok') });
    expect((await t.request('POST', '/auth/token/login', { body: { identifier: user.email, type: 'email' } })).status).toBe(200);
    const mail = await mailTo(smtp, user.email, /sign-in link/);
    const code = codeIn(mail.text);
    const link = tokenIn(linkIn(mail));
    const wrongId = rid();
    const wrong = code === '000000' ? '111111' : '000000';
    const bad = await t.request('POST', '/auth/token/validate', { body: { identifier: user.email, code: wrong }, headers: { 'X-Request-ID': wrongId } });
    expect(bad.status).toBe(400);
    const id = rid();
    const r = await t.request('POST', '/auth/token/validate', { body: { identifier: user.email, code }, headers: { 'X-Request-ID': id } });
    expect(r.status).toBe(200);
    const e = await oneEvent(t, user.id, 'sign_in.succeeded');
    expect(e).toMatchObject({ user_id: user.id, actor: { id: user.id }, details: { method: 'token' } });
    expectSource(e, id);
    await expectNoSecrets(t, e, [code, link, r.body.sessionId]);
    // The wrong code did not name the account (the code matched no token): the address it was sent with does.
    const find = async () => (await t.app.services.audit.list({ types: ['sign_in.failed'], limit: 200 })).events.find((x) => x.request_id === wrongId);
    await expect.poll(find, { timeout: 5000 }).toBeDefined();
    const f = (await find())!;
    expect(f).toMatchObject({ outcome: 'failure', user_id: null, details: { method: 'token', reason: 'invalid_token', identifier: user.email } });
    await expectNoSecrets(t, f, [wrong, code]);
  });

  it('when a sign-in link verifies an address, then email.verified commits with it', async () => {
    const user = await makeUser(t, { email: uniqueEmail('au-tokv'), is_verified: false });
    await t.request('POST', '/auth/token/login', { body: { identifier: user.email, type: 'email' } });
    const mail = await mailTo(smtp, user.email, /sign-in link/);
    const id = rid();
    const link = linkIn(mail);
    const r = await t.request('GET', link.pathname + link.search, { headers: { 'X-Request-ID': id } });
    expect(r.status).toBe(200);
    const e = await oneEvent(t, user.id, 'email.verified');
    expect(e).toMatchObject({ user_id: user.id, details: { via: 'token_login' } });
    expectSource(e, id);
    await expectNoSecrets(t, e, [tokenIn(link)]);
  });
});

describe('sign-out and session events', () => {
  it('when a user logs out, then sign_out names them and the session by prefix', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('au-out') });
    const id = rid();
    expect((await t.request('POST', '/auth/logout', { session: token, headers: { 'X-Request-ID': id } })).status).toBe(200);
    const e = await oneEvent(t, user.id, 'sign_out');
    expect(e).toMatchObject({ outcome: 'success', user_id: user.id, actor: { id: user.id }, details: {} });
    expectSource(e, id);
    await expectNoSecrets(t, e, [token]);
  });

  it("when an admin revokes a user's session, then session.revoked names the admin as actor and the session by prefix", async () => {
    const { user: admin, token: adminToken } = await makeSession(t, { email: uniqueEmail('au-adm'), user_type: 'admin' });
    const { user, token } = await makeSession(t, { email: uniqueEmail('au-rev') });
    const session = (await t.app.services.sessions.listForUser(user.id))[0];
    const id = rid();
    const r = await t.request('DELETE', `/auth/admin/users/${user.id}/sessions/${session.id}`, { session: adminToken, headers: { 'X-Request-ID': id } });
    expect(r.status).toBe(200);
    const e = await oneEvent(t, user.id, 'session.revoked');
    expect(e).toMatchObject({
      user_id: user.id,
      actor: { id: admin.id, user_type: 'admin' },
      details: { by: 'admin', count: 1 },
    });
    expectSource(e, id);
    await expectNoSecrets(t, e, [token, session.id]);
  });
});

describe('password and verification events', () => {
  it('when a user changes their password, then password.changed and one session.revoked for the others commit with it', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('au-pw') });
    const other = await t.app.services.sessions.create(user.id);
    const id = rid();
    const r = await t.request('POST', '/auth/password-change/self', {
      session: token,
      body: { current_password: DEFAULT_PASSWORD, new_password: NEW_PASSWORD },
      headers: { 'X-Request-ID': id },
    });
    expect(r.status).toBe(200);
    const e = await oneEvent(t, user.id, 'password.changed');
    expect(e).toMatchObject({ user_id: user.id, actor: { id: user.id }, details: { by: 'self', sessions_revoked: 1, session_kept: true } });
    expectSource(e, id);
    const revoked = await oneEvent(t, user.id, 'session.revoked');
    expect(revoked).toMatchObject({ actor: { id: user.id }, details: { count: 1, reason: 'password.changed' } });
    for (const x of [e, revoked]) await expectNoSecrets(t, x, [DEFAULT_PASSWORD, NEW_PASSWORD, token, other.token, other.session.id]);
  });

  it("when an admin sets a user's password, then password.changed (by admin) and session.revoked name the admin as actor", async () => {
    const { user: admin, token: adminToken } = await makeSession(t, { email: uniqueEmail('au-pwadm'), user_type: 'admin' });
    const { user, token } = await makeSession(t, { email: uniqueEmail('au-pwtarget') });
    const id = rid();
    const r = await t.request('POST', '/auth/password-change/admin', {
      session: adminToken,
      body: { user_id: user.id, new_password: NEW_PASSWORD },
      headers: { 'X-Request-ID': id },
    });
    expect(r.status).toBe(200);
    const e = await oneEvent(t, user.id, 'password.changed');
    expect(e).toMatchObject({
      user_id: user.id,
      actor: { id: admin.id, user_type: 'admin' },
      details: { by: 'admin', sessions_revoked: 1, session_kept: false },
    });
    expectSource(e, id);
    expect(await oneEvent(t, user.id, 'session.revoked')).toMatchObject({ actor: { id: admin.id }, details: { count: 1 } });
    await expectNoSecrets(t, e, [NEW_PASSWORD, token, adminToken]);
  });

  it("when an admin revokes all of a user's sessions, then one session.revoked carries the count", async () => {
    const { user: admin, token: adminToken } = await makeSession(t, { email: uniqueEmail('au-alladm'), user_type: 'admin' });
    const { user } = await makeSession(t, { email: uniqueEmail('au-all') });
    await t.app.services.sessions.create(user.id);
    const id = rid();
    expect((await t.request('DELETE', `/auth/admin/users/${user.id}/sessions`, { session: adminToken, headers: { 'X-Request-ID': id } })).status).toBe(200);
    const e = await oneEvent(t, user.id, 'session.revoked');
    expect(e).toMatchObject({ user_id: user.id, actor: { id: admin.id }, details: { by: 'admin', count: 2 } });
    expectSource(e, id);
  });

  it('when revoking the other sessions fails, then the password change rolls back and leaves no password.changed event', async () => {
    const { user } = await makeSession(t, { email: uniqueEmail('au-pwfail') });
    await expect(userServiceFailingRevocation(t).setPassword(user.id, NEW_PASSWORD)).rejects.toThrow('session store down');
    expect(await eventsOf(t, user.id, 'password.changed')).toEqual([]);
    expect(await eventsOf(t, user.id, 'session.revoked')).toEqual([]);
  });

  it('when a reset link sets a new password, then password.reset (anonymous request) and email.verified for an unverified address', async () => {
    const user = await makeUser(t, { email: uniqueEmail('au-reset'), is_verified: false });
    expect((await t.request('POST', '/auth/password-reset/request', { body: { email: user.email } })).status).toBe(200);
    const token = tokenIn(await mailTo(smtp, user.email, /^Reset your Gatehouse password$/));
    const id = rid();
    const r = await t.request('POST', '/auth/password-reset/complete', { body: { token, password: NEW_PASSWORD }, headers: { 'X-Request-ID': id } });
    expect(r.status).toBe(200);
    const e = await oneEvent(t, user.id, 'password.reset');
    expect(e).toMatchObject({ outcome: 'success', user_id: user.id, actor: null, details: { via: 'reset_link' } });
    expectSource(e, id);
    const v = await oneEvent(t, user.id, 'email.verified');
    expect(v).toMatchObject({ details: { via: 'password_reset' } });
    for (const x of [e, v]) await expectNoSecrets(t, x, [token, NEW_PASSWORD]);
  });

  it('when the verification link is opened, then email.verified is recorded once', async () => {
    const user = await makeUser(t, { email: uniqueEmail('au-ver'), is_verified: false });
    expect((await t.request('POST', '/auth/resend-verification', { body: { email: user.email } })).status).toBe(200);
    const link = linkIn(await mailTo(smtp, user.email, /^Verify your email for Gatehouse$/));
    const id = rid();
    expect((await t.request('GET', link.pathname + link.search, { headers: { 'X-Request-ID': id } })).status).toBeLessThan(400);
    const e = await oneEvent(t, user.id, 'email.verified');
    expect(e).toMatchObject({ user_id: user.id, details: { via: 'verification_link' } });
    expectSource(e, id);
    await expectNoSecrets(t, e, [tokenIn(link)]);
    // Opened again: already verified, nothing new.
    await follow(t, link);
    expect(await eventsOf(t, user.id, 'email.verified')).toHaveLength(1);
  });
});
