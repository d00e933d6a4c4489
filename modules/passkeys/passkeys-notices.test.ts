import { beforeAll, describe, expect, it } from 'vitest';
import { appWithMail } from '../../test/helpers/app-with-mail.js';
import { linkIn, mailsTo, tokenIn } from '../../test/integration/flows-helpers.js';
import { addPasskey, makeSession, ORIGIN, P, RP_ID, uniqueEmail } from './test/world.js';

/** What core does with the module's events and limits: the security notices and the module's own rate-limit class. */
const { t, smtp } = appWithMail({ env: { WEBAUTHN_RP_ID: RP_ID, WEBAUTHN_ORIGINS: ORIGIN, RATE_LIMIT_PASSKEYS: '4/1m' } });
beforeAll(async () => {
  await t.app.modules.hub.install(['passkeys']);
});

describe('passkeys: notices and limits', () => {
  it('when a passkey is added and removed, then the user is mailed each time with the passkey’s name', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('pk') });
    const { r } = await addPasskey(t, token, { name: 'Work laptop' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const added = await smtp.waitFor((m) => mailsTo(smtp, user.email).includes(m) && /passkey was added/i.test(m.subject ?? ''));
    expect(added.text).toContain('Work laptop');
    expect((await t.request('DELETE', `${P}/${r.body.passkey.id}`, { session: token })).status).toBe(200);
    const removed = await smtp.waitFor((m) => mailsTo(smtp, user.email).includes(m) && /passkey was removed/i.test(m.subject ?? ''));
    expect(removed.text).toContain('Work laptop');
  });

  it('when an admin removes a user’s passkey, then the user is mailed with its name', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('pk') });
    const { r } = await addPasskey(t, token, { name: 'Old phone' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const admin = await makeSession(t, { email: uniqueEmail('admin'), user_type: 'admin' });
    const removed = await t.request('DELETE', `/auth/admin/users/${user.id}/passkeys/${r.body.passkey.id}`, { session: admin.token });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    const mail = await smtp.waitFor((m) => mailsTo(smtp, user.email).includes(m) && /passkey was removed/i.test(m.subject ?? ''));
    expect(mail.text).toContain('Old phone');
  });

  it('when the user resets their password, then their passkeys stay', async () => {
    const { user, token } = await makeSession(t, { email: uniqueEmail('pk') });
    expect((await addPasskey(t, token)).r.status).toBe(200);
    expect((await t.request('POST', '/auth/password-reset/request', { body: { email: user.email } })).status).toBe(200);
    const link = linkIn(await smtp.waitFor((m) => mailsTo(smtp, user.email).includes(m) && /reset/i.test(m.subject ?? '')));
    const done = await t.request('POST', '/auth/password-reset/complete', { body: { token: tokenIn(link), password: 'New-Password-42!' } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const [rows] = await t.app.sequelize.query('SELECT id FROM passkey_credentials WHERE user_id = ?', { replacements: [user.id] });
    expect(rows).toHaveLength(1);
  });

  it('when the sign-in options are asked for past the passkeys class budget, then the answer is 429 RATE_LIMITED', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await t.request('POST', `${P}/login/options`, { body: {} })).status);
    expect(codes.slice(0, 4)).toEqual([200, 200, 200, 200]);
    expect(codes[4]).toBe(429);
  });
});
