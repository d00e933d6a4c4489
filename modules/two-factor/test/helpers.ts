import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, expect } from 'vitest';
import { codeIn, mailsTo, recipients } from '../../../test/integration/flows-helpers.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../../../test/helpers/factories.js';
import { startAppWithMail, type AppWithMail } from '../../../test/helpers/app-with-mail.js';
import type { TestResponse } from '../../../test/helpers/test-app.js';
import type { UserRecord } from '../../../src/module-api.js';

export { codeIn, DEFAULT_PASSWORD, makeSession, makeUser, mailsTo, uniqueEmail };

export type World = AppWithMail;

/** The app with a real SMTP server and a real (Twilio-shaped) SMS gateway, the module installed through the hub. */
export async function startWorld(env: Record<string, string> = {}, opts: { install?: boolean } = {}): Promise<World> {
  const w = await startAppWithMail({ sms: true, env });
  if (opts.install !== false) await w.t.app.modules.hub.install(['two-factor']);
  return w;
}

/** One world for the file's tests (started before them, closed after); read it inside a test. */
export function useWorld(env: Record<string, string> = {}): () => World {
  let w: World | undefined;
  beforeAll(async () => {
    w = await startWorld(env);
  });
  afterAll(async () => w?.close());
  return () => {
    if (!w) throw new Error('the world is not started yet');
    return w;
  };
}

export const TF = '/auth/two_factor';

/** Runs `action`, then waits for the next mail to `address` (whatever came before does not count). */
export async function nextMail(w: World, address: string, action: () => Promise<TestResponse>, subject = /verification code/i) {
  const before = mailsTo(w.smtp, address).length;
  const r = await action();
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const mail = await w.smtp.waitFor(
    (m) => recipients(m).includes(address.toLowerCase()) && subject.test(m.subject ?? '') && mailsTo(w.smtp, address).indexOf(m) >= before,
  );
  return { r, mail, code: codeIn(mail.text) };
}

export async function nextSms(w: World, phone: string, action: () => Promise<TestResponse>) {
  const before = w.sms.messages.filter((m) => m.to === phone).length;
  const r = await action();
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const text = await w.sms.waitFor((m) => m.to === phone && w.sms.messages.filter((x) => x.to === phone).indexOf(m) >= before);
  return { r, text, code: codeIn(text.body) };
}

export const login = (w: World, email: string, headers: Record<string, string> = {}, password = DEFAULT_PASSWORD) =>
  w.t.request('POST', '/auth/login', { body: { email, password }, headers });

/**
 * A user with an active email method (their own address) and 2FA on, which confirming that first method
 * turned on, with the backup codes made then; returns a full session of theirs too.
 */
export async function userWithEmail2fa(w: World, values: Partial<UserRecord> = {}) {
  const { user, token } = await makeSession(w.t, { email: uniqueEmail('tfa'), ...values });
  const { r, code } = await nextMail(w, user.email, () => w.t.request('POST', `${TF}/email/setup`, { session: token, body: {} }));
  const methodId = r.body.method_id as string;
  const v = await w.t.request('POST', `${TF}/verify`, { session: token, body: { method_id: methodId, code, action: 'setup' } });
  expect(v.status, JSON.stringify(v.body)).toBe(200);
  expect(v.body).toMatchObject({ success: true, two_factor_enabled: true, two_factor_turned_on: true });
  return { user, token, methodId, backupMethodId: v.body.backup_codes_method_id as string, backupCodes: v.body.backup_codes as string[] };
}

/** A code a manage proof can use: start with the email method on a full session, read the mail. */
export async function proofCode(w: World, token: string, email: string, methodId: string) {
  const { code } = await nextMail(w, email, () =>
    w.t.request('POST', `${TF}/email/start`, { session: token, body: { method_id: methodId, action: 'verify' } }),
  );
  return { verification_code: code, verification_method_id: methodId };
}

/** The current TOTP code for an otpauth:// URI, as an authenticator app computes it. */
export function totpNow(uri: string, at = Date.now()): string {
  return (OTPAuth.URI.parse(uri) as OTPAuth.TOTP).generate({ timestamp: at });
}

/** Waits until the current 30 s step has at least `ms` left, so two codes read now are of one step. */
export async function awayFromStepEdge(ms = 3000): Promise<void> {
  const left = 30_000 - (Date.now() % 30_000);
  if (left < ms) await new Promise((r) => setTimeout(r, left + 50));
}

export async function pendingLogin(w: World, email: string, headers: Record<string, string> = {}) {
  const r = await login(w, email, headers);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ success: false, requires_2fa: true });
  return { r, token: r.body.session_id as string };
}
