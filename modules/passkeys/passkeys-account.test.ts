import { describe, expect, it } from 'vitest';
import { sweepChallenges } from './challenges.js';
import { checkRelyingParty } from './doctor.js';
import { assert } from './test/authenticator.js';
import { addPasskey, makeSession, ORIGIN, P, rowsOf, signInWith, uniqueEmail, useApp, userWithPasskey } from './test/world.js';

/** Managing passkeys: renaming, the removal rules, the security events, export and erasure. */
const app = useApp();

describe('passkeys: rename and remove', () => {
  it('when a passkey is renamed, then the list shows the new name and passkeys.renamed is recorded', async () => {
    const t = app();
    const { user, token, passkey } = await userWithPasskey(t);
    const r = await t.request('PATCH', `${P}/${passkey.id}`, { session: token, body: { name: 'Phone' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await t.request('GET', P, { session: token })).body.passkeys[0].name).toBe('Phone');
    const events = (await t.app.services.audit.list({ userId: user.id, types: ['passkeys.renamed'] })).events;
    expect(events.map((e) => e.details)).toEqual([{ passkey_id: passkey.id, name: 'Phone' }]);
  });

  it("when someone else's passkey is renamed or removed, then it answers 404 and nothing changes", async () => {
    const t = app();
    const a = await userWithPasskey(t);
    const b = await makeSession(t, { email: uniqueEmail('pk') });
    expect((await t.request('PATCH', `${P}/${a.passkey.id}`, { session: b.token, body: { name: 'Mine' } })).status).toBe(404);
    expect((await t.request('DELETE', `${P}/${a.passkey.id}`, { session: b.token })).status).toBe(404);
    expect(await rowsOf(t, 'passkey_credentials', a.user.id)).toHaveLength(1);
  });

  it('when the session signed in more than 10 minutes ago, then removal is refused with RECENT_SIGN_IN_REQUIRED', async () => {
    const t = app();
    const { user, passkey } = await userWithPasskey(t);
    // A session of this user opened 11 minutes ago (changed before its first use, so nothing has cached it).
    const old = await t.app.services.sessions.create(user.id, { ip: '127.0.0.1', userAgent: 'vitest' });
    await t.app.sequelize.query('UPDATE sessions SET created_at = ? WHERE id = ?', { replacements: [new Date(Date.now() - 11 * 60_000), old.session.id] });
    const r = await t.request('DELETE', `${P}/${passkey.id}`, { session: old.token });
    expect(r.status, JSON.stringify(r.body)).toBe(403);
    expect(r.body.code).toBe('RECENT_SIGN_IN_REQUIRED');
    expect(await rowsOf(t, 'passkey_credentials', user.id)).toHaveLength(1);
  });

  it('when the passkey is the last way in (no password, no social link, no other passkey), then it cannot be removed; with another passkey it can', async () => {
    const t = app();
    const { user, token, passkey } = await userWithPasskey(t, { password_hash: null });
    const r = await t.request('DELETE', `${P}/${passkey.id}`, { session: token });
    expect(r.status, JSON.stringify(r.body)).toBe(409);
    expect(r.body.code).toBe('LAST_SIGN_IN_METHOD');
    const second = await addPasskey(t, token);
    expect(second.r.status).toBe(200);
    expect((await t.request('DELETE', `${P}/${passkey.id}`, { session: token })).status).toBe(200);
    expect((await t.request('DELETE', `${P}/${second.r.body.passkey.id}`, { session: token })).body.code).toBe('LAST_SIGN_IN_METHOD');
    expect(await rowsOf(t, 'passkey_credentials', user.id)).toHaveLength(1);
  });

  it('when a user with a password removes their only passkey, then it goes and passkeys.removed is recorded with its name', async () => {
    const t = app();
    const { user, token, passkey } = await userWithPasskey(t);
    expect((await t.request('DELETE', `${P}/${passkey.id}`, { session: token })).status).toBe(200);
    expect(await rowsOf(t, 'passkey_credentials', user.id)).toHaveLength(0);
    const events = (await t.app.services.audit.list({ userId: user.id, types: ['passkeys.removed'] })).events;
    expect(events.map((e) => e.details)).toEqual([{ passkey_id: passkey.id, name: 'Passkey' }]);
  });
});

describe('passkeys: security events, export, erasure', () => {
  it('when a passkey is added and used, then passkeys.added and sign_in.succeeded (passkey) are recorded and no event holds the key', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t);
    expect((await signInWith(t, credential)).r.status).toBe(200);
    const added = (await t.app.services.audit.list({ userId: user.id, types: ['passkeys.added'] })).events;
    expect(added).toHaveLength(1);
    expect(added[0].details).toMatchObject({ name: 'Passkey', device_type: 'singleDevice' });
    const signIns = (await t.app.services.audit.list({ userId: user.id, types: ['sign_in.succeeded'] })).events;
    expect(signIns.map((e) => e.details.method)).toEqual(['passkey']);
    const [stored] = await rowsOf(t, 'passkey_credentials', user.id);
    const [rows] = await t.app.sequelize.query('SELECT * FROM audit_events WHERE user_id = ?', { replacements: [user.id] });
    const raw = JSON.stringify(rows);
    expect(raw).not.toContain(String(stored.public_key));
    expect(raw).not.toContain(String(stored.credential_id));
  });

  it('when a refused sign-in is recorded, then passkeys.sign_in_refused says why', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t);
    expect((await signInWith(t, credential, { badSignature: true })).r.status).toBe(400);
    await expect
      .poll(async () => (await t.app.services.audit.list({ userId: user.id, types: ['passkeys.sign_in_refused'] })).events.map((e) => e.details.reason), {
        timeout: 5000,
      })
      .toEqual(['verification']);
  });

  it('when a user exports their data, then their passkeys are listed without the public key; erasure deletes them', async () => {
    const t = app();
    const { user } = await userWithPasskey(t);
    const [stored] = await rowsOf(t, 'passkey_credentials', user.id);
    const ctx = t.app.modules.context('passkeys');
    const data = await ctx.personalData.exportAll(user.id);
    const exported = data.modules.passkeys.passkeys as Record<string, unknown>[];
    expect(exported).toHaveLength(1);
    expect(exported[0]).toMatchObject({ name: 'Passkey', device_type: 'singleDevice', last_used_at: null });
    expect(JSON.stringify(data)).not.toContain(String(stored.public_key));
    await ctx.personalData.erase(user.id, 'test erasure');
    expect(await rowsOf(t, 'passkey_credentials', user.id)).toHaveLength(0);
  });
});

describe('passkeys: the challenge sweep', () => {
  it('when the sweep job runs, then expired challenges are deleted and live ones kept', async () => {
    const t = app();
    const ctx = t.app.modules.context('passkeys');
    await t.request('POST', `${P}/login/options`, { body: {} });
    await t.app.sequelize.query('UPDATE passkey_challenges SET expires_at = ?', { replacements: [new Date(Date.now() - 1000)] });
    const live = await t.request('POST', `${P}/login/options`, { body: {} });
    expect(live.status).toBe(200);
    await sweepChallenges(ctx);
    const [rows] = await t.app.sequelize.query('SELECT * FROM passkey_challenges');
    expect(rows).toHaveLength(1);
  });
});

describe('passkeys: the doctor check', () => {
  it('when the RP ID is not a suffix of an origin host, then it is a problem; plain http off localhost is a warning', () => {
    expect(checkRelyingParty({ id: 'example.com', origins: ['https://app.example.com', 'android:apk-key-hash:abc'] })).toEqual({ problems: [], warnings: [] });
    expect(checkRelyingParty({ id: 'example.com', origins: ['https://example.org'] }).problems).toHaveLength(1);
    expect(checkRelyingParty({ id: 'ample.com', origins: ['https://example.com'] }).problems).toHaveLength(1);
    expect(checkRelyingParty({ id: 'example.com', origins: ['http://example.com'] }).warnings).toHaveLength(1);
    expect(checkRelyingParty({ id: 'localhost', origins: ['http://localhost:3000'] }).warnings).toHaveLength(0);
  });
});

describe('passkeys: removal proven by the passkey itself', () => {
  /** A session of the user opened 11 minutes ago (changed before its first use, so nothing has cached it). */
  async function oldSession(t: ReturnType<typeof app>, userId: string) {
    const old = await t.app.services.sessions.create(userId, { ip: '127.0.0.1', userAgent: 'vitest' });
    await t.app.sequelize.query('UPDATE sessions SET created_at = ? WHERE id = ?', { replacements: [new Date(Date.now() - 11 * 60_000), old.session.id] });
    return old.token;
  }

  it('when an old session proves the passkey with an assertion over its remove options, then it is removed without a recent sign-in', async () => {
    const t = app();
    const { user, credential, passkey } = await userWithPasskey(t);
    const token = await oldSession(t, user.id);
    const o = await t.request('POST', `${P}/${passkey.id}/remove/options`, { session: token, body: {} });
    expect(o.status, JSON.stringify(o.body)).toBe(200);
    expect(o.body.options.allowCredentials.map((c: { id: string }) => c.id)).toEqual([credential.id]);
    const r = await t.request('DELETE', `${P}/${passkey.id}`, { session: token, body: { credential: assert(credential, o.body.options, { origin: ORIGIN }) } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await rowsOf(t, 'passkey_credentials', user.id)).toHaveLength(0);
  });

  it('when the proof is another passkey’s, a sign-in challenge’s, or replayed, then it is 400 PASSKEY_INVALID and nothing is removed', async () => {
    const t = app();
    const { user, token: fresh, credential, passkey } = await userWithPasskey(t);
    const second = await addPasskey(t, fresh);
    const token = await oldSession(t, user.id);
    const refused = (r: { status: number; body: { code?: string } }) => {
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.code).toBe('PASSKEY_INVALID');
    };
    const o = await t.request('POST', `${P}/${passkey.id}/remove/options`, { session: token, body: {} });
    // The other passkey's assertion over this passkey's remove challenge.
    refused(
      await t.request('DELETE', `${P}/${passkey.id}`, { session: token, body: { credential: assert(second.credential, o.body.options, { origin: ORIGIN }) } }),
    );
    // A sign-in challenge is not a removal's.
    const login = await t.request('POST', `${P}/login/options`, { body: {} });
    refused(
      await t.request('DELETE', `${P}/${passkey.id}`, { session: token, body: { credential: assert(credential, login.body.options, { origin: ORIGIN }) } }),
    );
    // Proof of the passkey, but presented for the other one.
    const o2 = await t.request('POST', `${P}/${passkey.id}/remove/options`, { session: token, body: {} });
    const proof = assert(credential, o2.body.options, { origin: ORIGIN });
    refused(await t.request('DELETE', `${P}/${second.r.body.passkey.id}`, { session: token, body: { credential: proof } }));
    expect(await rowsOf(t, 'passkey_credentials', user.id)).toHaveLength(2);
    // Remove options for someone else's passkey are 404.
    const other = await userWithPasskey(t);
    expect((await t.request('POST', `${P}/${other.passkey.id}/remove/options`, { session: token, body: {} })).status).toBe(404);
  });
});

describe('passkeys: admins', () => {
  it('when an admin lists and removes a user’s passkey, then it goes and passkeys.removed names the admin as actor', async () => {
    const t = app();
    const { user, passkey } = await userWithPasskey(t);
    const admin = await makeSession(t, { email: uniqueEmail('admin'), user_type: 'admin' });
    const list = await t.request('GET', `/auth/admin/users/${user.id}/passkeys`, { session: admin.token });
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.passkeys.map((p: { id: string }) => p.id)).toEqual([passkey.id]);
    expect(JSON.stringify(list.body)).not.toContain('public_key');
    const r = await t.request('DELETE', `/auth/admin/users/${user.id}/passkeys/${passkey.id}`, { session: admin.token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await rowsOf(t, 'passkey_credentials', user.id)).toHaveLength(0);
    const [event] = (await t.app.services.audit.list({ userId: user.id, types: ['passkeys.removed'] })).events;
    expect(event.details).toMatchObject({ passkey_id: passkey.id, by_admin: true });
    expect(event.actor).toMatchObject({ id: admin.user.id });
  });

  it('when a customer, an unknown user or another user’s passkey is named, then it is refused and nothing is removed', async () => {
    const t = app();
    const a = await userWithPasskey(t);
    const b = await userWithPasskey(t);
    const admin = await makeSession(t, { email: uniqueEmail('admin'), user_type: 'admin' });
    expect((await t.request('GET', `/auth/admin/users/${a.user.id}/passkeys`, { session: b.token })).status).toBe(403);
    expect((await t.request('DELETE', `/auth/admin/users/${a.user.id}/passkeys/${a.passkey.id}`, { session: b.token })).status).toBe(403);
    expect((await t.request('GET', `/auth/admin/users/no-such-user/passkeys`, { session: admin.token })).status).toBe(404);
    expect((await t.request('DELETE', `/auth/admin/users/${a.user.id}/passkeys/${b.passkey.id}`, { session: admin.token })).status).toBe(404);
    const sup = await userWithPasskey(t, { user_type: 'superadmin' });
    expect((await t.request('DELETE', `/auth/admin/users/${sup.user.id}/passkeys/${sup.passkey.id}`, { session: admin.token })).status).toBe(403);
    expect(await rowsOf(t, 'passkey_credentials', a.user.id)).toHaveLength(1);
    expect(await rowsOf(t, 'passkey_credentials', b.user.id)).toHaveLength(1);
    expect(await rowsOf(t, 'passkey_credentials', sup.user.id)).toHaveLength(1);
  });
});

describe('passkeys: default names', () => {
  it('when a passkey is added without a name, then it is called after its authenticator, else the browser, else Passkey', async () => {
    const t = app();
    const { token } = await makeSession(t, { email: uniqueEmail('pk') });
    const icloud = await addPasskey(t, token, { aaguid: 'fbfc3007-154e-4ecc-8c0b-6e020557d7bd' });
    expect(icloud.r.body.passkey.name).toBe('iCloud Keychain');
    const o = await t.request('POST', `${P}/register/options`, { session: token, body: {} });
    const { createCredential } = await import('./test/authenticator.js');
    const chrome = createCredential(o.body.options, { origin: ORIGIN });
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const r = await t.request('POST', `${P}/register/verify`, { session: token, body: { credential: chrome.response }, headers: { 'User-Agent': ua } });
    expect(r.body.passkey.name).toBe('Chrome on Linux');
    expect((await addPasskey(t, token, { aaguid: '11111111-2222-3333-4444-555555555555' })).r.body.passkey.name).toBe('Passkey');
    expect((await addPasskey(t, token, { aaguid: 'fbfc3007-154e-4ecc-8c0b-6e020557d7bd', name: 'Mine' })).r.body.passkey.name).toBe('Mine');
  });
});
