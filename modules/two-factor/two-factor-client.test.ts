import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { makeSession, nextMail, pendingLogin, startWorld, TF, uniqueEmail, userWithEmail2fa, type World } from './test/helpers.js';
import { recentSecondFactor, RECENT_SECOND_FACTOR_MS } from './proofs.js';

// The original's client (@pubflow/core) against the module: the shapes it reads and the requests it can send.
let w: World;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => w?.close());

const req = (method: string, path: string, session: string, body?: unknown) => w.t.request(method, path, { session, body });

/** A full session that has just completed its second factor (sign-in, emailed code, verify). */
async function freshlyVerified(email: string, methodId: string): Promise<string> {
  const { token } = await pendingLogin(w, email);
  const { code } = await nextMail(w, email, () => req('POST', `${TF}/email/start`, token, { method_id: methodId, action: 'login' }));
  const v = await req('POST', `${TF}/verify`, token, { method_id: methodId, code, action: 'login' });
  expect(v.body, JSON.stringify(v.body)).toMatchObject({ session_activated: true });
  return token;
}

describe(`two-factor for the original client (${BACKEND})`, () => {
  it('when 2FA is toggled, then active_methods lists method names and the views are under active_method_details', async () => {
    const { token, methodId, backupMethodId } = await userWithEmail2fa(w);
    const again = await req('POST', `${TF}/toggle`, token, { two_factor_enabled: true });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ success: true, two_factor_enabled: true, message: 'Two-factor authentication is already on' });
    // The email method, and the backup codes made when confirming it turned 2FA on.
    expect(again.body.active_methods).toEqual(['email', 'backup_codes']);
    expect(again.body.active_method_details).toEqual([
      expect.objectContaining({ id: methodId, method: 'email', status: 'active' }),
      expect.objectContaining({ id: backupMethodId, method: 'backup_codes', status: 'active' }),
    ]);
    // Shown once: never in a later answer.
    expect(again.body).not.toHaveProperty('backup_codes');
  });

  it('when a method is removed with empty proof strings while 2FA is off, then they read as absent', async () => {
    const { token } = await makeSession(w.t, { email: uniqueEmail('empty') });
    const setup = await req('POST', `${TF}/totp/setup`, token, {});
    expect(setup.status, JSON.stringify(setup.body)).toBe(200);
    const del = await req('DELETE', `${TF}/${setup.body.method_id}`, token, { verification_code: '', verification_method_id: '' });
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    expect(del.body).toMatchObject({ success: true, removed: true });
  });

  it('when a method is added while 2FA is on without a code, then a session without a recent second factor gets a 400 saying what works', async () => {
    const { token } = await userWithEmail2fa(w);
    const r = await req('POST', `${TF}/totp/setup`, token, {});
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('VERIFICATION_REQUIRED');
    expect(r.body.error).toMatch(/verification_code/);
    expect(r.body.error).toMatch(/within the last 10 minutes/);
  });

  it('when a method is added while 2FA is on right after the second factor, then no code is needed (setup() sends none)', async () => {
    const { user, methodId } = await userWithEmail2fa(w);
    const token = await freshlyVerified(user.email, methodId);
    const r = await req('POST', `${TF}/totp/setup`, token, { verification_code: '', verification_method_id: '' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, method: 'totp', status: 'pending_setup' });
  });

  it('when the second factor was completed more than 10 minutes ago, then the session no longer counts as recent', async () => {
    const created_at = new Date();
    const session = { two_factor_verified: true, created_at } as Parameters<typeof recentSecondFactor>[0];
    expect(recentSecondFactor(session, created_at.getTime() + RECENT_SECOND_FACTOR_MS - 1000)).toBe(true);
    expect(recentSecondFactor(session, created_at.getTime() + RECENT_SECOND_FACTOR_MS + 1000)).toBe(false);
    // A trusted device's session skipped the second factor: never recent.
    expect(recentSecondFactor({ ...session, two_factor_verified: false }, created_at.getTime())).toBe(false);
  });

  it('when the budget of wrong codes is spent, then the 429 carries a Retry-After header matching retry_after', async () => {
    const { user, methodId } = await userWithEmail2fa(w);
    const { token: pending } = await pendingLogin(w, user.email);
    await nextMail(w, user.email, () => req('POST', `${TF}/email/start`, pending, { method_id: methodId, action: 'login' }));
    let last;
    for (let i = 0; i < 8; i++) {
      last = await req('POST', `${TF}/verify`, pending, { method_id: methodId, code: '000000', action: 'login' });
      if (last.status === 429) break;
    }
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    if (last!.body.retry_after !== undefined) expect(last!.headers.get('retry-after')).toBe(String(last!.body.retry_after));
  });
});
