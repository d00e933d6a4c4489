import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/* The session a login hands out: the cookie's attributes for each public URL, and a fresh token every time (no fixation). */

let plain: TestApp;
let https: TestApp;
let crossSite: TestApp;
beforeAll(async () => {
  plain = await startTestApp();
  // The scheme as an operator might type it: URL schemes are case-insensitive.
  https = await startTestApp({ env: { PUBLIC_URL: 'HTTPS://Auth.Example.Test' } });
  crossSite = await startTestApp({ env: { SESSION_COOKIE_SAMESITE: 'none' } });
});
afterAll(async () => {
  await plain?.close();
  await https?.close();
  await crossSite?.close();
});

async function loginCookie(t: TestApp, headers: Record<string, string> = {}) {
  const user = await makeUser(t);
  const r = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD }, headers });
  expect(r.status).toBe(200);
  return { r, cookie: r.headers.get('set-cookie') ?? '' };
}

describe('session cookie attributes', () => {
  it('when the public URL is plain http, then the cookie is HttpOnly and SameSite=Lax, without Secure', async () => {
    const { cookie } = await loginCookie(plain);
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*SameSite=Lax/i);
    expect(cookie).not.toMatch(/;\s*Secure/i);
  });

  it('when the public URL is https (any case), then login, registration and logout cookies are Secure', async () => {
    const { r, cookie } = await loginCookie(https);
    expect(cookie).toMatch(/;\s*Secure/i);
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    const reg = await https.request('POST', '/auth/register/public', { body: { email: uniqueEmail('sec'), password: DEFAULT_PASSWORD } });
    expect(reg.headers.get('set-cookie')).toMatch(/;\s*Secure/i);
    const out = await https.request('POST', '/auth/logout', { session: r.body.sessionId });
    expect(out.headers.get('set-cookie')).toMatch(/;\s*Secure/i);
  });

  it('when SameSite=None is configured, then the cookie is also Secure (browsers drop it otherwise)', async () => {
    const { cookie } = await loginCookie(crossSite);
    expect(cookie).toMatch(/;\s*SameSite=None/i);
    expect(cookie).toMatch(/;\s*Secure/i);
  });
});

describe('session fixation', () => {
  it('when a login arrives carrying a session id chosen by someone else, then a fresh token is issued and the planted one stays invalid', async () => {
    const planted = `ses_${'P'.repeat(43)}`;
    const { r, cookie } = await loginCookie(plain, { Cookie: `session_id=${planted}`, 'X-Session-ID': planted });
    expect(r.body.sessionId).toMatch(/^ses_[A-Za-z0-9_-]{43}$/);
    expect(r.body.sessionId).not.toBe(planted);
    expect(cookie).toContain(`session_id=${r.body.sessionId}`);
    expect((await plain.request('GET', '/auth/me', { session: planted })).status).toBe(401);
  });

  it('when a user who already has a session logs in again, then the new session has a new token', async () => {
    const { user, token } = await makeSession(plain);
    const again = await plain.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD }, session: token });
    expect(again.status).toBe(200);
    expect(again.body.sessionId).not.toBe(token);
    const ids = new Set((await plain.app.services.sessions.listForUser(user.id)).map((s) => s.session_prefix));
    expect(ids.size).toBe(2);
  });
});
