import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * A password that `init` or `user create` made up works for 24 hours (ASVS 5.0 6.4.1): past that the
 * right password gets 401 PASSWORD_EXPIRED (the wrong one the usual 401), and any password set since
 * (own change, reset, admin) clears the end.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const login = (email: string, password = DEFAULT_PASSWORD) => t.request('POST', '/auth/login', { body: { email, password } });
const create = (passwordExpiresAt: Date) =>
  t.app.services.users.create({ email: uniqueEmail('gen'), password: DEFAULT_PASSWORD }, { actor: null, via: 'cli', verified: true, passwordExpiresAt });

describe('generated initial passwords', () => {
  it('when the 24 hours have not passed, then it signs in; once they have, the right password is refused with PASSWORD_EXPIRED and an audit event', async () => {
    const fresh = await create(new Date(Date.now() + 3_600_000));
    expect((await login(fresh.email)).status).toBe(200);
    const old = await create(new Date(Date.now() - 1000));
    const r = await login(old.email);
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ success: false, code: 'PASSWORD_EXPIRED' });
    // The wrong password says nothing about the expiry.
    expect((await login(old.email, 'Wrong-Horse-00')).body.code).toBe('INVALID_CREDENTIALS');
    await expect
      .poll(async () => (await t.app.services.audit.list({ types: ['sign_in.failed'], userId: old.id } as never)).events.map((e) => e.details?.reason))
      .toContain('password_expired');
  });

  it('when a new password is set (admin, or the user), then the end is cleared and the new one signs in', async () => {
    const old = await create(new Date(Date.now() - 1000));
    await t.app.services.users.setPassword(old.id, 'Brand-New-Pass-77');
    expect((await t.app.services.users.get(old.id))!.password_expires_at).toBeNull();
    expect((await login(old.email, 'Brand-New-Pass-77')).status).toBe(200);
  });

  it('when a user is created with a password the caller chose (registration, the admin API), then it has no end', async () => {
    const email = uniqueEmail('chosen');
    expect((await t.request('POST', '/auth/register/public', { body: { email, password: DEFAULT_PASSWORD } })).status).toBe(200);
    const user = await t.app.repos.users.findByEmail(email);
    expect(user!.password_expires_at).toBeNull();
  });
});
