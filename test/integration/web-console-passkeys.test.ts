import { beforeAll, describe, expect, it } from 'vitest';
import { addPasskey, ORIGIN, RP_ID } from '../../modules/passkeys/test/world.js';
import { appWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { WebClient } from '../helpers/web-client.js';

// A user's passkeys on the console's user page: listed and removed through the passkeys module's admin
// routes (found by method and path), the removal audited with the admin as actor and mailed to the user.
const { t, smtp } = appWithMail({ env: { WEBAUTHN_RP_ID: RP_ID, WEBAUTHN_ORIGINS: ORIGIN } });
beforeAll(async () => {
  await t.app.modules.hub.install(['passkeys']);
});

async function staff(userType: 'admin' | 'superadmin') {
  const user = await makeUser(t, { email: uniqueEmail(userType), user_type: userType });
  const c = new WebClient(t.url);
  expect((await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(303);
  return { c, user };
}
const consoleCsrf = (html: string) => [...html.matchAll(/name="_csrf" value="([^"]+)"/g)].map((m) => m[1]).at(-1)!;

describe('passkeys in the console', () => {
  it("when an admin opens a user's page, then the passkeys are listed (name escaped); removing one lands, is audited with the admin and mailed", async () => {
    const { c, user: admin } = await staff('admin');
    const { user, token } = await makeSession(t, { email: uniqueEmail('pk-owner') });
    const { r } = await addPasskey(t, token, { name: '<i>Phone</i>' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = r.body.passkey.id as string;
    const page = await c.get(`/admin/users/${user.id}`);
    expect(page.text).toContain(`data-passkey="${id}"`);
    expect(page.text).toContain('&lt;i&gt;Phone&lt;/i&gt;');
    expect(page.text).not.toContain('<i>Phone</i>');

    const before = smtp.messages.length;
    const removed = await c.request('POST', `/admin/users/${user.id}/passkeys/${id}/remove`, { form: { _csrf: consoleCsrf(page.text) } });
    expect(removed.status).toBe(303);
    expect(removed.location).toBe(`/admin/users/${user.id}?done=passkey_removed`);
    expect((await t.request('GET', '/auth/passkeys', { session: token })).body.passkeys).toEqual([]);
    const [event] = (await t.app.services.audit.list({ userId: user.id, types: ['passkeys.removed'], limit: 1 })).events;
    expect(event.actor).toMatchObject({ id: admin.id, user_type: 'admin' });
    await smtp.waitFor((m) => smtp.messages.indexOf(m) >= before && JSON.stringify(m).includes(user.email.toLowerCase()));
  });

  it("when an admin removes a superadmin's passkey or posts without the console token, then 403 and the passkey stays", async () => {
    const { c } = await staff('admin');
    const { user, token } = await makeSession(t, { email: uniqueEmail('pk-super'), user_type: 'superadmin' });
    const { r } = await addPasskey(t, token, { name: 'Key' });
    const id = r.body.passkey.id as string;
    const page = await c.get(`/admin/users/${user.id}`);
    expect(page.text).not.toContain(`/passkeys/${id}/remove`);
    const refused = await c.request('POST', `/admin/users/${user.id}/passkeys/${id}/remove`, { form: { _csrf: consoleCsrf(page.text) } });
    expect(refused.status).toBe(403);
    const forged = await c.request('POST', `/admin/users/${user.id}/passkeys/${id}/remove`, { form: {} });
    expect(forged.status).toBe(403);
    expect((await t.request('GET', '/auth/passkeys', { session: token })).body.passkeys).toHaveLength(1);
  });
});
