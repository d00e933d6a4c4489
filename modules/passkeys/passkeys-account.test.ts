import { describe, expect, it } from 'vitest';
import { sweepChallenges } from './challenges.js';
import { checkRelyingParty } from './doctor.js';
import { addPasskey, makeSession, P, rowsOf, signInWith, uniqueEmail, useApp, userWithPasskey } from './test/world.js';

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
