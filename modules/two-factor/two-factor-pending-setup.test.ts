import { describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { PENDING_SETUP_READABLE_MS } from './setup.js';
import { awayFromStepEdge, makeSession, pendingLogin, TF, totpNow, uniqueEmail, useWorld } from './test/helpers.js';

// GET /auth/two_factor/:method/setup: an unconfirmed setup shown again (the /account page reloaded
// halfway through adding an authenticator app goes on with the same key), never a confirmed one's key.
const world = useWorld();
const req = (method: string, path: string, session: string, body?: unknown) => world().t.request(method, path, { session, body });

describe(`two-factor: a pending setup read again (${BACKEND})`, () => {
  it('when an authenticator setup is pending, then GET answers its key and QR code again; a code from that key confirms it, and then GET is 404', async () => {
    const { token } = await makeSession(world().t, { email: uniqueEmail('pend') });
    const setup = await req('POST', `${TF}/totp/setup`, token, {});
    expect(setup.status, JSON.stringify(setup.body)).toBe(200);

    const again = await req('GET', `${TF}/totp/setup`, token);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({
      success: true,
      method_id: setup.body.method_id,
      method: 'totp',
      status: 'pending_setup',
      secret: setup.body.secret,
      otpauth_url: setup.body.otpauth_url,
    });
    expect(again.body.qr_code).toMatch(/^data:image\/png;base64,/);

    await awayFromStepEdge();
    const v = await req('POST', `${TF}/verify`, token, { method_id: again.body.method_id, code: totpNow(again.body.otpauth_url), action: 'setup' });
    expect(v.status, JSON.stringify(v.body)).toBe(200);
    expect(v.body).toMatchObject({ two_factor_turned_on: true });

    // Confirmed: the key is never answered again.
    const after = await req('GET', `${TF}/totp/setup`, token);
    expect(after.status).toBe(404);
    expect(after.body).toMatchObject({ success: false, code: 'METHOD_NOT_FOUND' });
    expect(JSON.stringify(after.body)).not.toContain(setup.body.secret);
  });

  it('when a second setup is started, then GET answers the new one (the first is gone)', async () => {
    const { token } = await makeSession(world().t, { email: uniqueEmail('pend2') });
    const first = await req('POST', `${TF}/totp/setup`, token, {});
    const second = await req('POST', `${TF}/totp/setup`, token, {});
    const again = await req('GET', `${TF}/totp/setup`, token);
    expect(again.body).toMatchObject({ method_id: second.body.method_id, secret: second.body.secret });
    expect(again.body.secret).not.toBe(first.body.secret);
  });

  it('when there is no pending setup, it was cancelled, or it is over an hour old, then GET is 404 METHOD_NOT_FOUND', async () => {
    const { token } = await makeSession(world().t, { email: uniqueEmail('pend3') });
    expect((await req('GET', `${TF}/totp/setup`, token)).body).toMatchObject({ success: false, code: 'METHOD_NOT_FOUND' });

    const cancelled = await req('POST', `${TF}/totp/setup`, token, {});
    expect((await req('DELETE', `${TF}/${cancelled.body.method_id}`, token, {})).status).toBe(200);
    expect((await req('GET', `${TF}/totp/setup`, token)).status).toBe(404);

    const old = await req('POST', `${TF}/totp/setup`, token, {});
    const then = new Date(Date.now() - PENDING_SETUP_READABLE_MS - 60_000);
    await world().t.app.sequelize.query('UPDATE two_factor_methods SET created_at = ? WHERE id = ?', { replacements: [then, old.body.method_id] });
    const stale = await req('GET', `${TF}/totp/setup`, token);
    expect(stale.status).toBe(404);
    expect(JSON.stringify(stale.body)).not.toContain(old.body.secret);
  });

  it("when another user, a pending sign-in or no session asks, then they get nothing of the user's setup", async () => {
    const { token } = await makeSession(world().t, { email: uniqueEmail('pend4') });
    const setup = await req('POST', `${TF}/totp/setup`, token, {});
    const other = await makeSession(world().t, { email: uniqueEmail('pend5') });
    const theirs = await req('GET', `${TF}/totp/setup`, other.token);
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(theirs.body)).not.toContain(setup.body.secret);
    expect((await world().t.request('GET', `${TF}/totp/setup`)).status).toBe(401);
    expect((await req('GET', `${TF}/fax/setup`, token)).status).toBe(400);

    // A pending (second-step) session of a user with 2FA on may not read setups.
    const { user: u2, token: t2 } = await makeSession(world().t, { email: uniqueEmail('pend6') });
    const s2 = await req('POST', `${TF}/totp/setup`, t2, {});
    await awayFromStepEdge();
    await req('POST', `${TF}/verify`, t2, { method_id: s2.body.method_id, code: totpNow(s2.body.otpauth_url), action: 'setup' });
    const { token: pending } = await pendingLogin(world(), u2.email);
    expect((await req('GET', `${TF}/totp/setup`, pending)).status).toBe(401);
  });
});
