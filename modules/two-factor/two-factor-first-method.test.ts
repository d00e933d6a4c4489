import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import {
  awayFromStepEdge,
  login,
  makeSession,
  mailsTo,
  nextMail,
  nextSms,
  pendingLogin,
  proofCode,
  startWorld,
  TF,
  totpNow,
  uniqueEmail,
  useWorld,
  type World,
} from './test/helpers.js';

/**
 * Confirming the first method turns two-factor on (issue 52): what the page and the API promise when
 * a method is added ("Add a method to turn it on"), in the same transaction as the confirmation, with
 * two_factor.enabled and the "turned on" mail as POST /toggle writes them, and the user's first backup
 * codes in the confirm answer, once. Before, the method was confirmed and 2FA stayed off: the next
 * sign-in asked for no code.
 */
const world = useWorld();
const rid = () => `rid-${randomBytes(6).toString('hex')}`;
const req = (method: string, path: string, session: string | undefined, body?: unknown, requestId = rid()) =>
  world().t.request(method, path, { session, body, headers: { 'X-Request-ID': requestId } });

const eventsOf = async (w: World, userId: string, type: string) => (await w.t.app.services.audit.list({ userId, types: [type] })).events;
const TURNED_ON = /^Two-factor authentication changed on your Gatehouse account$/;

async function backupCodeRows(w: World, userId: string) {
  const [rows] = await w.t.app.sequelize.query('SELECT id, method_id, code_hash FROM two_factor_backup_codes WHERE user_id = ? ORDER BY code_hash', {
    replacements: [userId],
  });
  return rows as { id: string; method_id: string; code_hash: string }[];
}

/** A signed-in user with a pending authenticator app; the otpauth URI is what the app would scan. */
async function pendingTotp(w: World, label: string) {
  const { user, token } = await makeSession(w.t, { email: uniqueEmail(label) });
  const s = await req('POST', `${TF}/totp/setup`, token, {});
  expect(s.status, JSON.stringify(s.body)).toBe(200);
  return { user, token, methodId: s.body.method_id as string, uri: s.body.otpauth_url as string };
}

describe(`confirming the first method turns two-factor on (${BACKEND})`, () => {
  it('when the first method (an authenticator app) is confirmed, then 2FA is on, the answer carries the backup codes once, and a fresh password sign-in needs the code', async () => {
    const w = world();
    const { user, token, methodId, uri } = await pendingTotp(w, 'first-totp');
    expect((await req('GET', `${TF}/methods`, token)).body.two_factor_enabled).toBe(false);
    const mailsBefore = mailsTo(w.smtp, user.email).length;

    await awayFromStepEdge();
    const confirmId = rid();
    const v = await req('POST', `${TF}/verify`, token, { method_id: methodId, code: totpNow(uri), action: 'setup' }, confirmId);
    expect(v.status, JSON.stringify(v.body)).toBe(200);
    // Every field the answer had, and what the confirmation changed beside the method.
    expect(v.body).toMatchObject({
      success: true,
      verified: true,
      method: 'totp',
      method_id: methodId,
      session_activated: false,
      status: 'active',
      user: { id: user.id, two_factor: true },
      two_factor_enabled: true,
      two_factor_turned_on: true,
      backup_codes_method_id: expect.any(String),
    });
    expect(v.body.message).toMatch(/^Two-factor method verified; two-factor authentication is now on/);
    const codes = v.body.backup_codes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z0-9]{5}-[a-z0-9]{5}$/);
    expect(v.body.codes).toEqual(codes);

    // The state the API reads, and the stored codes (hashes only).
    const listed = await req('GET', `${TF}/methods`, token);
    expect(listed.body.two_factor_enabled).toBe(true);
    expect(listed.body.methods.map((m: { method: string; status: string }) => `${m.method}:${m.status}`).sort()).toEqual([
      'backup_codes:active',
      'totp:active',
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(codes[0]);
    expect(await backupCodeRows(w, user.id)).toHaveLength(10);
    expect((await w.t.app.services.users.get(user.id))!.two_factor).toBeTruthy();

    // The events, written in the confirmation's request (its transaction), with the user as actor.
    const enabled = await eventsOf(w, user.id, 'two_factor.enabled');
    expect(enabled).toHaveLength(1);
    expect(enabled[0]).toMatchObject({ outcome: 'success', user_id: user.id, actor: { id: user.id }, request_id: confirmId });
    const added = await eventsOf(w, user.id, 'two_factor.method_added');
    expect(added.map((e) => `${e.details?.method}:${e.request_id}`).sort()).toEqual([`backup_codes:${confirmId}`, `totp:${confirmId}`]);
    const raw = JSON.stringify(await w.t.app.sequelize.query('SELECT * FROM audit_events WHERE user_id = ?', { replacements: [user.id] }));
    for (const c of codes) expect(raw).not.toContain(c);
    // The user is told 2FA is on (the same notice as POST /toggle's), and that a method was added.
    await w.smtp.waitFor((m) => mailsTo(w.smtp, user.email).indexOf(m) >= mailsBefore && TURNED_ON.test(m.subject ?? '') && /turned on/.test(m.text ?? ''));
    await w.smtp.waitFor((m) => mailsTo(w.smtp, user.email).indexOf(m) >= mailsBefore && /was added/.test(m.text ?? ''));

    // POST /toggle still answers as the spec says: it is on already.
    const toggled = await req('POST', `${TF}/toggle`, token, { two_factor_enabled: true });
    expect(toggled.body).toMatchObject({ success: true, two_factor_enabled: true, active_methods: expect.arrayContaining(['totp', 'backup_codes']) });
    expect(await eventsOf(w, user.id, 'two_factor.enabled')).toHaveLength(1);

    // A fresh password sign-in stops at the second step; the app's next code finishes it.
    const { r, token: pending } = await pendingLogin(w, user.email);
    expect(r.body.available_methods).toEqual(expect.arrayContaining([expect.objectContaining({ id: methodId, method: 'totp' })]));
    expect((await req('GET', '/auth/validation', pending)).body.success).toBe(false);
    const ok = await req('POST', `${TF}/verify`, pending, { method: 'totp', code: totpNow(uri, Date.now() + 30_000) });
    expect(ok.body).toMatchObject({ verified: true, session_activated: true, session_id: pending });
    // And a backup code from the confirm answer signs in too (once).
    const { token: again } = await pendingLogin(w, user.email);
    expect((await req('POST', `${TF}/verify`, again, { method: 'backup_codes', code: codes[0] })).body).toMatchObject({ session_activated: true });
  });

  it('when the first method is an emailed code, then confirming it turns 2FA on too; a second method (SMS) confirmed later keeps the first backup codes', async () => {
    const w = world();
    const { user, token } = await makeSession(w.t, { email: uniqueEmail('first-email') });
    const { r, code } = await nextMail(w, user.email, () => req('POST', `${TF}/email/setup`, token, {}));
    const emailId = r.body.method_id as string;
    const first = await req('POST', `${TF}/verify`, token, { method_id: emailId, code, action: 'setup' });
    expect(first.body).toMatchObject({ success: true, status: 'active', two_factor_enabled: true, two_factor_turned_on: true });
    const codes = first.body.backup_codes as string[];
    expect(codes).toHaveLength(10);
    const stored = await backupCodeRows(w, user.id);
    expect((await login(w, user.email)).body).toMatchObject({ success: false, requires_2fa: true });

    // The second method: 2FA is on, so adding it takes a current code; confirming it changes nothing else.
    const phone = `+1555${String(Date.now()).slice(-7)}`;
    const proof = await proofCode(w, token, user.email, emailId);
    const sms = await nextSms(w, phone, () => req('POST', `${TF}/sms/setup`, token, { phone, ...proof }));
    const second = await req('POST', `${TF}/verify`, token, { method_id: sms.r.body.method_id, code: sms.code, action: 'setup' });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toMatchObject({ success: true, verified: true, method: 'sms', status: 'active', message: 'Two-factor method verified' });
    expect(second.body).toMatchObject({ two_factor_enabled: true, two_factor_turned_on: false, user: { two_factor: true } });
    expect(second.body).not.toHaveProperty('backup_codes');
    expect(second.body).not.toHaveProperty('codes');
    expect(await backupCodeRows(w, user.id)).toEqual(stored);
    expect(await eventsOf(w, user.id, 'two_factor.enabled')).toHaveLength(1);
    expect((await eventsOf(w, user.id, 'two_factor.method_added')).map((e) => e.details?.method).sort()).toEqual(['backup_codes', 'email', 'sms']);
    // The first set still works.
    const { token: pending } = await pendingLogin(w, user.email);
    expect((await req('POST', `${TF}/verify`, pending, { method: 'backup_codes', code: codes[1] })).body).toMatchObject({ session_activated: true });
  });

  it('when 2FA was turned off with POST /toggle and a method is then confirmed, then it is on again and the backup codes the user has are kept', async () => {
    const w = world();
    const { user, token } = await makeSession(w.t, { email: uniqueEmail('off-again') });
    const { r, code } = await nextMail(w, user.email, () => req('POST', `${TF}/email/setup`, token, {}));
    const emailId = r.body.method_id as string;
    expect((await req('POST', `${TF}/verify`, token, { method_id: emailId, code, action: 'setup' })).body.two_factor_turned_on).toBe(true);
    const stored = await backupCodeRows(w, user.id);
    const off = await req('POST', `${TF}/toggle`, token, { two_factor_enabled: false, ...(await proofCode(w, token, user.email, emailId)) });
    expect(off.body).toMatchObject({ success: true, two_factor_enabled: false });
    expect((await login(w, user.email)).body.success).toBe(true);

    const s = await req('POST', `${TF}/totp/setup`, token, {});
    await awayFromStepEdge();
    const v = await req('POST', `${TF}/verify`, token, { method_id: s.body.method_id, code: totpNow(s.body.otpauth_url), action: 'setup' });
    expect(v.body).toMatchObject({ success: true, two_factor_enabled: true, two_factor_turned_on: true });
    expect(v.body).not.toHaveProperty('backup_codes');
    expect(await backupCodeRows(w, user.id)).toEqual(stored);
    expect(await eventsOf(w, user.id, 'two_factor.enabled')).toHaveLength(2);
    expect((await login(w, user.email)).body).toMatchObject({ success: false, requires_2fa: true });
  });

  it('when POST /toggle turns 2FA on for a user with a confirmed method and no backup codes (confirmed before this change), then it makes them the same way', async () => {
    const w = world();
    const { user, token } = await makeSession(w.t, { email: uniqueEmail('legacy') });
    const { r, code } = await nextMail(w, user.email, () => req('POST', `${TF}/email/setup`, token, {}));
    expect((await req('POST', `${TF}/verify`, token, { method_id: r.body.method_id, code, action: 'setup' })).status).toBe(200);
    // What confirming left before: the method active, 2FA off, no backup codes.
    await w.t.app.sequelize.query("DELETE FROM two_factor_methods WHERE user_id = ? AND kind = 'backup_codes'", { replacements: [user.id] });
    await w.t.app.services.users.patch(user.id, { two_factor: false });
    expect((await login(w, user.email)).body.success).toBe(true);

    const on = await req('POST', `${TF}/toggle`, token, { two_factor_enabled: true });
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body).toMatchObject({ success: true, two_factor_enabled: true, enabled: true, active_methods: ['email', 'backup_codes'] });
    expect(on.body.message).toMatch(/^Two-factor authentication turned on; store the backup codes now/);
    expect(on.body.backup_codes).toHaveLength(10);
    expect(on.body.active_method_details).toEqual([
      expect.objectContaining({ method: 'email' }),
      expect.objectContaining({ id: on.body.backup_codes_method_id }),
    ]);
    expect(await backupCodeRows(w, user.id)).toHaveLength(10);
    const { token: pending } = await pendingLogin(w, user.email);
    expect((await req('POST', `${TF}/verify`, pending, { method: 'backup_codes', code: on.body.backup_codes[0] })).body).toMatchObject({
      session_activated: true,
    });
  });

  it('when two first methods are confirmed at once, then 2FA is turned on once: one two_factor.enabled, one set of backup codes', async () => {
    const w = world();
    const { user, token, methodId: totpId, uri } = await pendingTotp(w, 'first-race');
    const { r, code } = await nextMail(w, user.email, () => req('POST', `${TF}/email/setup`, token, {}));
    await awayFromStepEdge();
    const answers = await Promise.all([
      req('POST', `${TF}/verify`, token, { method_id: totpId, code: totpNow(uri), action: 'setup' }),
      req('POST', `${TF}/verify`, token, { method_id: r.body.method_id, code, action: 'setup' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.map((a) => a.body.two_factor_enabled)).toEqual([true, true]);
    expect(answers.filter((a) => a.body.two_factor_turned_on)).toHaveLength(1);
    expect(answers.filter((a) => Array.isArray(a.body.backup_codes))).toHaveLength(1);
    expect(await eventsOf(w, user.id, 'two_factor.enabled')).toHaveLength(1);
    expect(await backupCodeRows(w, user.id)).toHaveLength(10);
  });
});

describe(`confirming the first method where backup codes are not offered (${BACKEND})`, () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld({}, { install: false });
    await w.t.app.modules.hub.install(['two-factor'], { config: { 'two-factor': { methods: ['email', 'totp'] } } });
  });
  afterAll(async () => w?.close());

  it('when the first method is confirmed, then 2FA is on and no backup codes are made', async () => {
    const { user, token } = await makeSession(w.t, { email: uniqueEmail('no-backup') });
    const s = await w.t.request('POST', `${TF}/totp/setup`, { session: token, body: {} });
    await awayFromStepEdge();
    const v = await w.t.request('POST', `${TF}/verify`, {
      session: token,
      body: { method_id: s.body.method_id, code: totpNow(s.body.otpauth_url), action: 'setup' },
    });
    expect(v.body).toMatchObject({ success: true, two_factor_enabled: true, two_factor_turned_on: true });
    expect(v.body).not.toHaveProperty('backup_codes');
    expect(await backupCodeRows(w, user.id)).toEqual([]);
    expect((await login(w, user.email)).body).toMatchObject({ success: false, requires_2fa: true });
  });
});
