import { describe, expect, it } from 'vitest';
import { useWorld, userWithEmail2fa } from '../../modules/two-factor/test/helpers.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { csrfIn, WebClient } from '../helpers/web-client.js';
import { codeIn, mailsTo } from './flows-helpers.js';

// The two-factor step of the hosted pages without a browser or script: the pending session in an
// HttpOnly cookie, "send me a code" and the code itself through the provider's own handlers.
const world = useWorld();

describe('hosted two-factor step', () => {
  it('when a two-factor user signs in on the page, then the mailed code (sent from the page) finishes it and nothing else does', async () => {
    const w = world();
    const { user, methodId } = await userWithEmail2fa(w);
    const c = new WebClient(w.t.url);
    const first = await c.submit('/login?return_to=%2Fdone', '/login', { email: user.email, password: DEFAULT_PASSWORD, return_to: '/done' });
    expect(first.status).toBe(303);
    expect(first.location).toBe('/login/two-factor?return_to=%2Fdone');
    const pendingCookie = c.setCookies.find((l) => l.startsWith('session_id='))!;
    expect(pendingCookie).toMatch(/HttpOnly/);
    // The pending session is not a sign-in: the account page sends the browser back to /login.
    expect((await c.get('/account')).location).toBe('/login?return_to=%2Faccount');
    // /login with the pending cookie goes on to the second step.
    expect((await c.get('/login?return_to=%2Fdone')).location).toBe('/login/two-factor?return_to=%2Fdone');

    const step = await c.get('/login/two-factor?return_to=%2Fdone');
    expect(step.status).toBe(200);
    expect(step.text).toContain('Code by email');
    const before = mailsTo(w.smtp, user.email).length;
    const sent = await c.submit('/login/two-factor?return_to=%2Fdone', '/login/two-factor', { method_id: methodId, send: '1', return_to: '/done' });
    expect(sent.status).toBe(200);
    expect(sent.text).toContain('A code is on its way');
    const mail = await w.smtp.waitFor((m) => mailsTo(w.smtp, user.email).indexOf(m) >= before && /code/i.test(m.subject ?? ''));
    const code = codeIn(mail.text);

    const wrong = await c.submit('/login/two-factor', '/login/two-factor', {
      method_id: methodId,
      code: code === '000000' ? '111111' : '000000',
      return_to: '/done',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('That code did not work');
    const forged = await c.request('POST', '/login/two-factor', { form: { method_id: methodId, code, return_to: '/done' } });
    expect(forged.status).toBe(403);

    const stepToken = csrfIn((await c.get('/login/two-factor')).text);
    const ok = await c.request('POST', '/login/two-factor', { form: { _csrf: stepToken, method_id: methodId, code, return_to: '/done' } });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe('/done');
    expect((await c.get('/account')).status).toBe(200);
    // The second step completed the sign-in: the token of the pending session's pages is refused now.
    expect((await c.request('POST', '/account/sessions/revoke-others', { form: { _csrf: stepToken } })).status).toBe(403);
    const me = await w.t.request('GET', '/auth/me', { session: c.jar.get('session_id') });
    expect(me.body.data.user.email).toBe(user.email);
  });

  it('when the second step is opened without a pending session, then it sends the browser to /login', async () => {
    const c = new WebClient(world().t.url);
    expect((await c.get('/login/two-factor')).location).toBe('/login');
  });

  it("when the page's passkey step is asked without a pending session, without the token, or with a malformed credential, then it is refused and the session stays pending", async () => {
    const w = world();
    const { user, methodId } = await userWithEmail2fa(w);
    const anonymous = new WebClient(w.t.url);
    const none = await anonymous.submit('/login', '/login/two-factor/passkey', { method_id: 'passkey' });
    expect(none.status).toBe(400);
    expect(JSON.parse(none.text)).toMatchObject({ success: false });

    const c = new WebClient(w.t.url);
    expect((await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD })).location).toBe('/login/two-factor');
    // No passkeys provider here: the two-factor module refuses the method, as JSON for the script.
    const refused = await c.submit('/login/two-factor', '/login/two-factor/passkey', { method_id: 'passkey' });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(JSON.parse(refused.text)).toMatchObject({ success: false, code: expect.any(String) });
    const forged = await c.request('POST', '/login/two-factor/passkey', { form: { method_id: 'passkey' } });
    expect(forged.status).toBe(403);
    const bad = await c.submit('/login/two-factor', '/login/two-factor', { method_id: methodId, credential: '{not json' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('The passkey did not work');
    expect((await c.get('/account')).location).toBe('/login?return_to=%2Faccount');
  });

  it('when an authenticator setup is left halfway, then /account shows it again (also after a wrong code), and cancel removes only a pending setup', async () => {
    const w = world();
    const user = await makeUser(w.t, { email: uniqueEmail('web-resume') });
    const c = new WebClient(w.t.url);
    expect((await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD })).location).toBe('/account');
    const added = await c.submit('/account', '/account/two-factor/add', { method: 'totp' });
    expect(added.status).toBe(200);
    const key = /data-totp-secret>([A-Z2-7 ]+)</.exec(added.text)![1]!.replace(/ /g, '');
    const methodId = /name="method_id" value="([\w-]+)"/.exec(added.text)![1]!;

    const again = await c.get('/account');
    expect(again.text).toContain('data-totp-resumed');
    expect(again.text.replace(/ /g, '')).toContain(`data-totp-secret>${key}<`);
    // A wrong code: the refusal, and the same panel to try again.
    const wrong = await c.submit('/account', '/account/two-factor/confirm', { method_id: methodId, code: '000000' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('id="account-error"');
    expect(wrong.text.replace(/ /g, '')).toContain(`data-totp-secret>${key}<`);

    // Cancel takes a pending setup only: a method in use (backup codes made through the API) is refused and stays.
    const backup = await w.t.request('POST', '/auth/two_factor/backup_codes/setup', { session: c.jar.get('session_id'), body: {} });
    expect(backup.status).toBe(200);
    const refused = await c.submit('/account', '/account/two-factor/cancel', { method_id: backup.body.method_id });
    expect(refused.status).toBe(404);
    const cancelled = await c.submit('/account', '/account/two-factor/cancel', { method_id: methodId });
    expect(cancelled.location).toBe('/account?done=two_factor_cancelled#second-step');
    expect((await c.get('/account')).text).not.toContain('data-totp-secret');
    const [rows] = await w.t.app.sequelize.query('SELECT id, status FROM two_factor_methods WHERE user_id = ?', { replacements: [user.id] });
    expect(rows).toEqual([{ id: backup.body.method_id, status: 'active' }]);
  });
});
