import { describe, expect, it } from 'vitest';
import { assert, type Ceremony, type SoftCredential } from './test/authenticator.js';
import { addPasskey, makeSession, ORIGIN, P, rowsOf, signInWith, uniqueEmail, useApp, userWithPasskey } from './test/world.js';

/** Registration and sign-in with a software authenticator (ES256), through the API a browser client uses. */
const app = useApp();

describe('passkeys: register, list, sign in', () => {
  it('when a user adds a passkey, signs out and signs in with it (discoverable), then the session works and the answer is login’s', async () => {
    const t = app();
    const { user, token } = await makeSession(t, { email: uniqueEmail('pk') });
    const { credential, r, options } = await addPasskey(t, token, { name: 'Laptop' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'preferred' });
    expect(options.attestation).toBe('none');
    expect(r.body.passkey).toMatchObject({ name: 'Laptop', device_type: 'singleDevice', backed_up: false, transports: ['internal'], last_used_at: null });
    const list = await t.request('GET', P, { session: token });
    expect(list.body.passkeys.map((p: { id: string }) => p.id)).toEqual([r.body.passkey.id]);
    expect(JSON.stringify(list.body)).not.toContain('public_key');

    expect((await t.request('POST', '/auth/logout', { session: token })).status).toBe(200);
    const { r: signedIn } = await signInWith(t, credential);
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    expect(signedIn.body).toMatchObject({ success: true, message: 'Login successful', user: { id: user.id, email: user.email } });
    expect(signedIn.body.session_id).toBe(signedIn.body.sessionId);
    expect(signedIn.body.expires_at).toBe(signedIn.body.expiresAt);
    expect(signedIn.headers.get('set-cookie') ?? '').toMatch(/=/);
    const me = await t.request('GET', '/auth/user/me', { session: signedIn.body.session_id, bridge: true });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    const again = await t.request('GET', P, { session: signedIn.body.session_id });
    expect(again.body.passkeys[0].last_used_at).not.toBeNull();
  });

  it('when login options are asked for with a known, an unknown or no email, then the answers have the same shape and allow any discoverable credential', async () => {
    const t = app();
    const { user } = await userWithPasskey(t);
    const shapes = [];
    for (const body of [{ email: user.email }, { email: uniqueEmail('nobody') }, {}]) {
      const r = await t.request('POST', `${P}/login/options`, { body });
      expect(r.status).toBe(200);
      expect(r.body.options.allowCredentials).toEqual([]);
      shapes.push(Object.keys(r.body.options).sort().join(','));
    }
    expect(new Set(shapes).size).toBe(1);
  });

  it('when a two-factor user signs in with a passkey without user verification, then the session is pending as from a password', async () => {
    const t = app();
    const { credential } = await userWithPasskey(t, { two_factor: true });
    await t.app.modules.hub.install(['two-factor']);
    const { r } = await signInWith(t, credential, { uv: false });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: false, requires_2fa: true });
  });

  it('when the register routes are called without a full session, then they answer 401', async () => {
    const t = app();
    expect((await t.request('POST', `${P}/register/options`, { body: {} })).status).toBe(401);
    expect((await t.request('GET', P)).status).toBe(401);
  });
});

describe('passkeys: every refusal is 400 PASSKEY_INVALID with nothing created', () => {
  const refused = (r: { status: number; body: { code?: string } }) => {
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.code).toBe('PASSKEY_INVALID');
  };

  it('when a sign-in response is replayed, then the second use of its challenge is refused and opens no session', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t);
    const { r, assertion } = await signInWith(t, credential);
    expect(r.status).toBe(200);
    const before = (await rowsOf(t, 'sessions', user.id)).length;
    refused(await t.request('POST', `${P}/login/verify`, { body: { credential: assertion } }));
    expect((await rowsOf(t, 'sessions', user.id)).length).toBe(before);
  });

  it('when the origin, the RP ID, the signature or the challenge is wrong, or the credential unknown, then each is refused and opens no session', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t);
    refused((await signInWith(t, credential, { origin: 'https://evil.example' })).r);
    refused((await signInWith(t, credential, { rpId: 'evil.example' })).r);
    refused((await signInWith(t, credential, { badSignature: true })).r);
    refused((await signInWith(t, credential, { challenge: Buffer.from('made-up-challenge').toString('base64url') })).r);
    refused((await signInWith(t, { ...credential, id: Buffer.from('unknown').toString('base64url') })).r);
    expect(await rowsOf(t, 'sessions', user.id)).toHaveLength(1); // the one makeSession opened
  });

  it('when a registration answers a challenge given to another user or to a sign-in, then it is refused and nothing is stored', async () => {
    const t = app();
    const a = await makeSession(t, { email: uniqueEmail('pk') });
    const b = await makeSession(t, { email: uniqueEmail('pk') });
    const o = await t.request('POST', `${P}/register/options`, { session: a.token, body: {} });
    const { createCredential } = await import('./test/authenticator.js');
    const { response } = createCredential(o.body.options, { origin: ORIGIN });
    refused(await t.request('POST', `${P}/register/verify`, { session: b.token, body: { credential: response } }));
    const login = await t.request('POST', `${P}/login/options`, { body: {} });
    const foreign = createCredential({ ...o.body.options, challenge: login.body.options.challenge }, { origin: ORIGIN });
    refused(await t.request('POST', `${P}/register/verify`, { session: a.token, body: { credential: foreign.response } }));
    refused((await addPasskey(t, a.token, { origin: 'https://evil.example' })).r);
    expect(await rowsOf(t, 'passkey_credentials', a.user.id)).toHaveLength(0);
    expect(await rowsOf(t, 'passkey_credentials', b.user.id)).toHaveLength(0);
  });

  it('when the signature counter goes backwards, then the sign-in is refused and recorded as a possible clone', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t);
    expect((await signInWith(t, credential, { counter: 5 })).r.status).toBe(200);
    refused((await signInWith(t, credential, { counter: 3 })).r);
    refused((await signInWith(t, credential, { counter: 5 })).r);
    await expect
      .poll(async () => (await t.app.services.audit.list({ userId: user.id, types: ['passkeys.clone_suspected'] })).events.length, { timeout: 5000 })
      .toBe(2);
  });

  it('when a disabled user signs in with a passkey, then it is refused', async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t);
    await t.app.repos.users.update(user.id, { disabled_at: new Date() });
    refused((await signInWith(t, credential)).r);
  });

  it('when the credential is malformed, then sign-in and registration answer 400 PASSKEY_INVALID, never 500', async () => {
    const t = app();
    const { user, token } = await makeSession(t, { email: uniqueEmail('pk') });
    const o = await t.request('POST', `${P}/login/options`, { body: {} });
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: o.body.options.challenge, origin: ORIGIN })).toString('base64url');
    for (const credential of [
      {},
      { id: 5, response: 'x' },
      { id: 'abc', response: { clientDataJSON: 'not-base64-json' } },
      { id: 'abc', response: { clientDataJSON } },
    ]) {
      refused(await t.request('POST', `${P}/login/verify`, { body: { credential } }));
      refused(await t.request('POST', `${P}/register/verify`, { session: token, body: { credential } }));
    }
    expect(await rowsOf(t, 'passkey_credentials', user.id)).toHaveLength(0);
  });

  it('when a challenge has expired, then the response is refused', async () => {
    const t = app();
    const { credential } = await userWithPasskey(t);
    const o = await t.request('POST', `${P}/login/options`, { body: {} });
    await t.app.sequelize.query('UPDATE passkey_challenges SET expires_at = ?', { replacements: [new Date(Date.now() - 1000)] });
    refused(await t.request('POST', `${P}/login/verify`, { body: { credential: assert(credential, o.body.options, { origin: ORIGIN }) } }));
  });
});

describe('passkeys: a sign-in started for one account signs in only that account (issue 52)', () => {
  const refused = (r: { status: number; body: { code?: string } }) => {
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.code).toBe('PASSKEY_INVALID');
  };

  /** Options asked for `email`, answered by `credential`'s authenticator. */
  async function signInFor(t: ReturnType<typeof app>, email: string, credential: SoftCredential, c: Partial<Ceremony> = {}) {
    const o = await t.request('POST', `${P}/login/options`, { body: { email } });
    expect(o.status, JSON.stringify(o.body)).toBe(200);
    return t.request('POST', `${P}/login/verify`, { body: { credential: assert(credential, o.body.options, { origin: ORIGIN, ...c }) } });
  }

  it("when another account's email started the sign-in, then its owner's passkey is refused 400 PASSKEY_ACCOUNT_MISMATCH, nobody is signed in, and the refusal is recorded", async () => {
    const t = app();
    const owner = await userWithPasskey(t);
    const other = await userWithPasskey(t);
    const sessionsBefore = [(await rowsOf(t, 'sessions', owner.user.id)).length, (await rowsOf(t, 'sessions', other.user.id)).length];
    for (const email of [other.user.email, uniqueEmail('nobody')]) {
      const r = await signInFor(t, email, owner.credential);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body).toEqual({
        success: false,
        error: 'This passkey belongs to another account than the one the sign-in was started for',
        code: 'PASSKEY_ACCOUNT_MISMATCH',
      });
      expect(r.headers.get('set-cookie')).toBeNull();
    }
    expect([(await rowsOf(t, 'sessions', owner.user.id)).length, (await rowsOf(t, 'sessions', other.user.id)).length]).toEqual(sessionsBefore);
    await expect
      .poll(async () => (await t.app.services.audit.list({ userId: owner.user.id, types: ['passkeys.sign_in_refused'] })).events.map((e) => e.details.reason), {
        timeout: 5000,
      })
      .toEqual(['account_mismatch', 'account_mismatch']);
  });

  it("when the sign-in was started for the passkey's own email (any case), or for none, then it signs that account in", async () => {
    const t = app();
    const { user, credential } = await userWithPasskey(t);
    const r = await signInFor(t, user.email.toUpperCase(), credential);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.user).toMatchObject({ id: user.id });
    expect((await signInWith(t, credential)).r.status).toBe(200);
  });

  it("when another account's email started it and the assertion is not proven (a bad signature, a replay), then the answer is PASSKEY_INVALID: whose a credential is is told to its holder only", async () => {
    const t = app();
    const owner = await userWithPasskey(t);
    const other = await userWithPasskey(t);
    refused(await signInFor(t, other.user.email, owner.credential, { badSignature: true }));
    const o = await t.request('POST', `${P}/login/options`, { body: { email: other.user.email } });
    const assertion = assert(owner.credential, o.body.options, { origin: ORIGIN });
    expect((await t.request('POST', `${P}/login/verify`, { body: { credential: assertion } })).body.code).toBe('PASSKEY_ACCOUNT_MISMATCH');
    refused(await t.request('POST', `${P}/login/verify`, { body: { credential: assertion } }));
  });
});
