import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { login, makeSession, nextMail, pendingLogin, proofCode, TF, uniqueEmail, useWorld, type World } from './test/helpers.js';

/**
 * The two-factor module writes core's two_factor.* events (it is the second-factor provider) in the
 * transaction of each change, and a wrong code at sign-in as sign_in.failed; the pending session is
 * no sign-in until its second step makes it full.
 */
const world = useWorld();
/** An event as the record gives it (read through the app, as an operator's query would). */
type AuditEvent = Awaited<ReturnType<World['t']['app']['services']['audit']['list']>>['events'][number];

const rid = () => `rid-${randomBytes(6).toString('hex')}`;

async function eventsOf(w: World, userId: string, type: string): Promise<AuditEvent[]> {
  return (await w.t.app.services.audit.list({ userId, types: [type] })).events;
}

async function oneEvent(w: World, userId: string, type: string): Promise<AuditEvent> {
  await expect.poll(async () => (await eventsOf(w, userId, type)).length, { timeout: 5000 }).toBe(1);
  return (await eventsOf(w, userId, type))[0];
}

async function expectNoSecrets(w: World, e: AuditEvent, secrets: string[]): Promise<void> {
  const [rows] = await w.t.app.sequelize.query('SELECT * FROM audit_events WHERE id = ?', { replacements: [e.id] });
  const raw = JSON.stringify(rows);
  for (const s of secrets) expect(raw, `the row holds ${s}`).not.toContain(s);
}

function expectSource(e: AuditEvent, requestId: string): void {
  expect(e.ip).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  expect(e.request_id).toBe(requestId);
}

const req = (w: World, method: string, path: string, session: string | undefined, body: unknown, requestId = rid()) =>
  w.t.request(method, path, { session, body, headers: { 'X-Request-ID': requestId } });

/** A user who set up an email method, whose confirmation turned 2FA on (and made the backup codes), with its own request id. */
async function enrolled(w: World) {
  const { user, token } = await makeSession(w.t, { email: uniqueEmail('tfa-audit') });
  const { r, code } = await nextMail(w, user.email, () => req(w, 'POST', `${TF}/email/setup`, token, {}));
  const methodId = r.body.method_id as string;
  const added = rid();
  const v = await req(w, 'POST', `${TF}/verify`, token, { method_id: methodId, code, action: 'setup' }, added);
  expect(v.body, JSON.stringify(v.body)).toMatchObject({ success: true, two_factor_enabled: true });
  // POST /toggle after it: on already, nothing written.
  expect((await req(w, 'POST', `${TF}/toggle`, token, { two_factor_enabled: true })).body.two_factor_enabled).toBe(true);
  const backup = { id: v.body.backup_codes_method_id as string, codes: v.body.backup_codes as string[] };
  return { user, token, methodId, setupCode: code, backup, ids: { added } };
}

describe(`two-factor security events (${BACKEND})`, () => {
  it('when the first method is confirmed, turning 2FA on, then two_factor.method_added (it, the backup codes) and two_factor.enabled name the user as actor', async () => {
    const w = world();
    const { user, token, methodId, setupCode, backup, ids } = await enrolled(w);
    await expect.poll(async () => (await eventsOf(w, user.id, 'two_factor.method_added')).length, { timeout: 5000 }).toBe(2);
    const both = await eventsOf(w, user.id, 'two_factor.method_added');
    const added = both.find((e) => e.details?.method === 'email')!;
    expect(added).toMatchObject({ outcome: 'success', user_id: user.id, actor: { id: user.id }, details: { method: 'email', method_id: methodId } });
    const codes = both.find((e) => e.details?.method === 'backup_codes')!;
    expect(codes).toMatchObject({ user_id: user.id, actor: { id: user.id }, details: { method: 'backup_codes', method_id: backup.id } });
    const enabled = await oneEvent(w, user.id, 'two_factor.enabled');
    expect(enabled).toMatchObject({ user_id: user.id, actor: { id: user.id, user_type: 'customer' } });
    // All three in the confirmation's request (one transaction).
    for (const e of [added, codes, enabled]) expectSource(e, ids.added);
    for (const e of [added, codes, enabled]) await expectNoSecrets(w, e, [setupCode, token, user.email, ...backup.codes]);
  });

  it('when a pending session gets a wrong code, then sign_in.failed (two_factor_failed); the right one, then sign_in.succeeded (two_factor) only then', async () => {
    const w = world();
    const { user, methodId } = await enrolled(w);
    const { token: pending } = await pendingLogin(w, user.email);
    // Opening the pending session is not a sign-in yet.
    expect(await eventsOf(w, user.id, 'sign_in.succeeded')).toEqual([]);
    const { code } = await nextMail(w, user.email, () => req(w, 'POST', `${TF}/email/start`, pending, { method_id: methodId, action: 'login' }));
    const wrong = code === '000000' ? '111111' : '000000';
    const wrongId = rid();
    expect((await req(w, 'POST', `${TF}/verify`, pending, { method_id: methodId, code: wrong, action: 'login' }, wrongId)).status).toBe(400);
    const failed = await oneEvent(w, user.id, 'sign_in.failed');
    expect(failed).toMatchObject({
      outcome: 'failure',
      user_id: user.id,
      actor: { id: user.id },
      details: { method: 'two_factor', reason: 'two_factor_failed', second_factor: 'email' },
    });
    expectSource(failed, wrongId);
    const okId = rid();
    expect((await req(w, 'POST', `${TF}/verify`, pending, { method_id: methodId, code, action: 'login' }, okId)).body.session_activated).toBe(true);
    const ok = await oneEvent(w, user.id, 'sign_in.succeeded');
    expect(ok).toMatchObject({
      user_id: user.id,
      actor: { id: user.id, user_type: 'customer' },
      details: { method: 'two_factor', second_factor: 'two-factor' },
    });
    expectSource(ok, okId);
    for (const e of [failed, ok]) await expectNoSecrets(w, e, [code, wrong, pending]);
  });

  it('when a trusted device skips the second step, then sign_in.succeeded (password) says so, without the device token', async () => {
    const w = world();
    const { user, methodId } = await enrolled(w);
    const { token: pending } = await pendingLogin(w, user.email);
    const { code } = await nextMail(w, user.email, () => req(w, 'POST', `${TF}/email/start`, pending, { method_id: methodId, action: 'login' }));
    const device = (await req(w, 'POST', `${TF}/verify`, pending, { method_id: methodId, code, trust_device: true })).body.trusted_device_token as string;
    expect(device).toMatch(/^tdv_/);
    const id = rid();
    const r = await login(w, user.email, { 'X-Trusted-Device': device, 'X-Request-ID': id });
    expect(r.body.success).toBe(true);
    const direct = (await eventsOf(w, user.id, 'sign_in.succeeded')).filter((e) => e.request_id === id);
    expect(direct).toHaveLength(1);
    expect(direct[0]).toMatchObject({
      actor: { id: user.id },
      details: { method: 'password', second_factor: 'trusted_device' },
    });
    expectSource(direct[0], id);
    await expectNoSecrets(w, direct[0], [device, r.body.sessionId]);
  });

  it('when a method is removed and 2FA turned off with a code, then two_factor.method_removed and two_factor.disabled', async () => {
    const w = world();
    const { user, token, methodId, backup } = await enrolled(w);
    const backupId = backup.id;
    const proof = await proofCode(w, token, user.email, methodId);
    const removedId = rid();
    expect((await req(w, 'DELETE', `${TF}/${backupId}`, token, proof, removedId)).status).toBe(200);
    const removed = await oneEvent(w, user.id, 'two_factor.method_removed');
    expect(removed).toMatchObject({ actor: { id: user.id }, details: { method: 'backup_codes', method_id: backupId } });
    expectSource(removed, removedId);
    const offProof = await proofCode(w, token, user.email, methodId);
    const offId = rid();
    expect((await req(w, 'POST', `${TF}/toggle`, token, { two_factor_enabled: false, ...offProof }, offId)).body.two_factor_enabled).toBe(false);
    const disabled = await oneEvent(w, user.id, 'two_factor.disabled');
    expect(disabled).toMatchObject({ user_id: user.id, actor: { id: user.id } });
    expectSource(disabled, offId);
    for (const e of [removed, disabled]) await expectNoSecrets(w, e, [proof.verification_code, offProof.verification_code, ...backup.codes]);
  });

  it("when an admin resets a user's 2FA, then two_factor.reset names the admin as actor and the user as subject", async () => {
    const w = world();
    const { user } = await enrolled(w);
    const { user: admin, token: adminToken } = await makeSession(w.t, { email: uniqueEmail('tfa-admin'), user_type: 'admin' });
    const id = rid();
    const r = await req(w, 'POST', `/auth/admin/users/${user.id}/two-factor/reset`, adminToken, {}, id);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const e = await oneEvent(w, user.id, 'two_factor.reset');
    // The email method and the backup codes made when it was confirmed.
    expect(e).toMatchObject({ user_id: user.id, actor: { id: admin.id, user_type: 'admin' }, details: { methods_removed: 2 } });
    expectSource(e, id);
    // Signing in now needs no second step: a full session at once.
    expect((await login(w, user.email)).body.success).toBe(true);
  });

  it('when another module writes a two_factor.* event, then it is refused; the provider may write the family', async () => {
    const w = world();
    const { user } = await makeSession(w.t, { email: uniqueEmail('tfa-guard') });
    await w.t.app.modules.hub.install(['privacy']).catch(() => undefined);
    const other = w.t.app.modules.context('privacy');
    await expect(other.audit.record({ type: 'two_factor.enabled', userId: user.id })).rejects.toThrow(/not declared/);
    expect(() => other.audit.recordLater({ type: 'sign_in.failed', userId: user.id })).toThrow(/not declared/);
    await w.t.app.modules.context('two-factor').audit.record({ type: 'two_factor.enabled', userId: user.id });
    expect(await eventsOf(w, user.id, 'two_factor.enabled')).toHaveLength(1);
    // Outside the catalogue, even the provider is refused.
    await expect(w.t.app.modules.context('two-factor').audit.record({ type: 'two_factor.invented', userId: user.id })).rejects.toThrow(/not declared/);
  });
});
