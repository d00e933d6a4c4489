import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { csrfIn, WebClient } from '../helpers/web-client.js';

/*
 * Cookie names with PUBLIC_URL https (ASVS 5.0 3.3.1 / 3.3.3; docs/sessions.md, "Cookie names"): the
 * hosted pages' session and CSRF cookies are `__Host-` cookies (Secure, Path=/, no Domain); the API
 * keeps the spec's `session_id` and reads both; the plain names a browser still holds are read for one
 * release, and a page's answer moves them to the prefixed names and clears the old ones.
 */

const PUBLIC_URL = 'https://auth.example.test';
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { PUBLIC_URL, WEB_PAGES: 'true' } });
});
afterAll(async () => t?.close());

/** As a browser behind the TLS proxy sends it. */
const client = () => new WebClient(t.url, { 'x-forwarded-proto': 'https' });
const setCookie = (c: WebClient, name: string) => c.setCookies.filter((l) => l.startsWith(`${name}=`)).at(-1);
const cleared = (c: WebClient, name: string) => c.setCookies.some((l) => l.startsWith(`${name}=;`) && /Expires=Thu, 01 Jan 1970/.test(l));

async function signIn(c: WebClient, email: string) {
  return c.submit('/login', '/login', { email, password: DEFAULT_PASSWORD });
}

describe('__Host- cookies on the pages', () => {
  it('when a user signs in on a page, then the session and CSRF cookies are __Host- cookies (Secure, Path=/, no Domain), and the API takes the session', async () => {
    const user = await makeUser(t, { email: uniqueEmail('host-prefix') });
    const c = client();
    const r = await signIn(c, user.email);
    expect(r.status, r.text).toBe(303);
    for (const name of ['__Host-session_id', '__Host-gh_csrf']) {
      const line = setCookie(c, name);
      expect(line, name).toBeDefined();
      expect(line).toMatch(/; Secure/);
      expect(line).toMatch(/; Path=\//);
      expect(line).not.toMatch(/Domain=/i);
      expect(line).toMatch(/HttpOnly/);
    }
    expect(c.jar.has('session_id')).toBe(false);
    expect(c.jar.has('gh_csrf')).toBe(false);
    // The page's session is the API's: the prefixed cookie validates there as the cookie, too.
    const me = await c.request('GET', '/auth/me', { headers: { accept: 'application/json' } });
    expect(me.status, me.text).toBe(200);
    expect(JSON.parse(me.text).data.user.email).toBe(user.email);
    // A form of a page posts with the prefixed binding.
    expect((await c.submit('/account', '/account/profile', { name: 'Prefixed' })).status).toBe(303);
    expect((await t.app.repos.users.findById(user.id))!.name).toBe('Prefixed');
  });

  it('when a browser still holds the old plain cookies, then the page works and its answer moves them to the __Host- names and clears the old', async () => {
    const { user, token } = await makeSession(t);
    const c = client();
    c.jar.set('session_id', token);
    c.jar.set('gh_csrf', 'b'.repeat(32));
    const page = await c.get('/account');
    expect(page.status).toBe(200);
    expect(page.text).toContain(user.email);
    expect(c.jar.get('__Host-session_id')).toBe(token);
    expect(setCookie(c, '__Host-session_id')).toMatch(/; Secure/);
    expect(cleared(c, 'session_id')).toBe(true);
    expect(c.jar.has('session_id')).toBe(false);
    // The binding keeps its value under the new name, so the form the page carries posts.
    expect(c.jar.get('__Host-gh_csrf')).toBe('b'.repeat(32));
    expect(c.jar.has('gh_csrf')).toBe(false);
    const posted = await c.request('POST', '/account/profile', { form: { _csrf: csrfIn(page.text), name: 'Moved' } });
    expect(posted.status).toBe(303);
    expect((await t.app.repos.users.findById(user.id))!.name).toBe('Moved');
  });

  it('when a sibling host plants a plain session_id beside the __Host- one, then the __Host- one is the session', async () => {
    const user = await makeUser(t, { email: uniqueEmail('shadow') });
    const c = client();
    await signIn(c, user.email);
    const { token: other } = await makeSession(t);
    c.jar.set('session_id', other);
    const me = await c.request('GET', '/auth/me', { headers: { accept: 'application/json' } });
    expect(JSON.parse(me.text).data.user.email).toBe(user.email);
  });

  it('when a user signs out on a page, then both names are cleared and the session ends', async () => {
    const user = await makeUser(t, { email: uniqueEmail('out') });
    const c = client();
    await signIn(c, user.email);
    const token = c.jar.get('__Host-session_id')!;
    expect((await c.submit('/account', '/logout', {})).status).toBe(303);
    expect(c.jar.has('__Host-session_id')).toBe(false);
    expect((await t.request('GET', '/auth/me', { session: token })).status).toBe(401);
  });
});

describe('the OpenID provider', () => {
  it('when a user signed in on a page authorizes a first-party client, then the provider takes the __Host- session (no sign-in asked again)', async () => {
    const REDIRECT = 'https://app.example.test/cb';
    const { client: rp } = await t.app.services.oidc.clients.add({ name: 'Prefixed', redirect_uris: [REDIRECT], first_party: true });
    const user = await makeUser(t, { email: uniqueEmail('oidc') });
    const c = client();
    await signIn(c, user.email);
    expect(c.jar.has('__Host-session_id')).toBe(true);
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: rp.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      state: 'st-1',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    // Redirects on the public origin are followed here (the provider names PUBLIC_URL), until one leaves it.
    let path = `/oidc/auth?${query}`;
    let location = '';
    for (let i = 0; i < 10; i++) {
      const r = await c.get(path);
      expect([302, 303], r.text).toContain(r.status);
      location = new URL(r.location!, PUBLIC_URL).toString();
      if (!location.startsWith(`${PUBLIC_URL}/`)) break;
      path = location.slice(PUBLIC_URL.length);
    }
    expect(location).toMatch(new RegExp(`^${REDIRECT}\\?code=`));
  });
});

describe('the API keeps the spec’s cookie name', () => {
  it('when a client signs in through the API, then the cookie is session_id (as the spec and the original’s clients name it), and it still authenticates', async () => {
    const user = await makeUser(t, { email: uniqueEmail('api') });
    const c = client();
    const login = await c.request('POST', '/auth/login', { json: { email: user.email, password: DEFAULT_PASSWORD } });
    expect(login.status, login.text).toBe(200);
    expect(setCookie(c, 'session_id')).toMatch(/; Secure/);
    expect(c.jar.has('__Host-session_id')).toBe(false);
    const me = await c.request('GET', '/auth/me', { headers: { accept: 'application/json' } });
    expect(JSON.parse(me.text).data.user.email).toBe(user.email);
    // The next page moves it to the prefixed name.
    expect((await c.get('/account')).status).toBe(200);
    expect(c.jar.get('__Host-session_id')).toBe(JSON.parse(login.text).session_id);
  });

  it('when a page session exists and a new sign-in comes through the API, then the old __Host- cookie is cleared so it cannot shadow the new one', async () => {
    const first = await makeUser(t, { email: uniqueEmail('first') });
    const second = await makeUser(t, { email: uniqueEmail('second') });
    const c = client();
    await signIn(c, first.email);
    const login = await c.request('POST', '/auth/login', { json: { email: second.email, password: DEFAULT_PASSWORD } });
    expect(login.status, login.text).toBe(200);
    expect(c.jar.has('__Host-session_id')).toBe(false);
    const me = await c.request('GET', '/auth/me', { headers: { accept: 'application/json' } });
    expect(JSON.parse(me.text).data.user.email).toBe(second.email);
  });
});
