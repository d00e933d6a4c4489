import { describe, expect, it } from 'vitest';
import { useWorld, userWithEmail2fa } from '../../modules/two-factor/test/helpers.js';
import { DEFAULT_PASSWORD } from '../helpers/factories.js';
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
});
