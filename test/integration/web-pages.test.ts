import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { csrfIn, WebClient } from '../helpers/web-client.js';
import { linkIn, mailTo } from './flows-helpers.js';
import { PUBLIC, RETURN_ORIGIN, socialEnv } from './social-helpers.js';

// The hosted pages over plain HTTP (no browser): headers, CSRF, cookies, return_to, limits, mail links.
const { t, smtp } = appWithMail({ env: { WEB_PAGES: 'true', SOCIAL_REDIRECT_ALLOWLIST: 'https://app.example.test' } });
const client = () => new WebClient(t.url);

async function signIn(c: WebClient, email: string, returnTo?: string) {
  const q = returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : '';
  return c.submit(`/login${q}`, '/login', { email, password: DEFAULT_PASSWORD, ...(returnTo ? { return_to: returnTo } : {}) });
}

describe('page headers', () => {
  it('when a page is served, then its CSP has a fresh nonce, no unsafe-inline or eval, and no framing', async () => {
    const a = await client().get('/login');
    const b = await client().get('/login');
    expect(a.status).toBe(200);
    const csp = a.headers.get('content-security-policy')!;
    const nonce = /'nonce-([^']+)'/.exec(csp)![1];
    expect(csp).toContain(`script-src 'nonce-${nonce}'`);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(b.headers.get('content-security-policy')).not.toContain(nonce);
    // Every script and style element carries this response's nonce.
    for (const tag of a.text.match(/<(script|style)\b[^>]*>/g) ?? []) expect(tag).toContain(`nonce="${nonce}"`);
    expect(a.text).not.toMatch(/\son[a-z]+=|style="/i);
    expect(a.headers.get('x-frame-options')).toBe('DENY');
    expect(a.headers.get('cache-control')).toBe('no-store');
  });

  it('when the assets are fetched, then their names carry a content hash, they are cached a year, and CSS + JS stay under 100 kB gzip', async () => {
    const page = await client().get('/login');
    const urls = [...page.text.matchAll(/(?:href|src)="(\/web\/assets\/[^"]+)"/g)].map((m) => m[1]);
    // The stylesheet, the script and the icon.
    expect(urls.length).toBe(3);
    let gz = 0;
    for (const u of urls) {
      expect(u).toMatch(/\/web\/assets\/(web\.[0-9a-f]{12}\.(css|js)|favicon\.[0-9a-f]{12}\.svg)$/);
      const r = await fetch(t.url + u);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      gz += gzipSync(Buffer.from(await r.arrayBuffer())).length;
    }
    expect(gz).toBeLessThan(100 * 1024);
    const shipped = t.app && (await import('../../src/web/view.js')).createWebView(t.app.config, t.app.logger).assets.all();
    const total = shipped.filter((a) => /\.(css|js)$/.test(a.name)).reduce((n, a) => n + a.gzip.length, 0);
    console.info(`web assets: ${total} bytes gzip (CSS + JS)`);
    expect(total).toBeLessThan(100 * 1024);
    expect((await fetch(`${t.url}/web/assets/web.000000000000.css`)).status).toBe(404);
  });

  it('when a browser asks for an unknown page, then the 404 page; an API client keeps the JSON 404', async () => {
    const html = await client().get('/no-such-page');
    expect(html.status).toBe(404);
    expect(html.headers.get('content-type')).toMatch(/text\/html/);
    expect(html.text).toContain('Page not found');
    const api = await t.request('GET', '/no-such-page');
    expect(api.status).toBe(404);
    expect(api.body).toMatchObject({ success: false });
  });

  it('when Accept-Language prefers Spanish, then the page is in Spanish; a signed-in user with lang es too', async () => {
    const es = await new WebClient(t.url, { 'accept-language': 'fr-FR, es;q=0.8, en;q=0.5' }).get('/login');
    expect(es.text).toContain('<html lang="es">');
    expect(es.text).toContain('Contraseña');
    const user = await makeUser(t, { email: uniqueEmail('es'), lang: 'es' });
    const c = client();
    await signIn(c, user.email);
    expect((await c.get('/account')).text).toContain('Tu cuenta');
  });
});

describe('CSRF', () => {
  it('when a form is posted without the token, or with a token of another browser, then 403 page and no session', async () => {
    const user = await makeUser(t, { email: uniqueEmail('csrf') });
    const c = client();
    const none = await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD }, { csrf: false });
    expect(none.status).toBe(403);
    expect(none.text).toContain('This form has expired');
    expect(none.text).not.toMatch(/at .*\.ts:\d+/);
    expect(c.jar.has('session_id')).toBe(false);

    const other = client();
    const foreignToken = csrfIn((await other.get('/login')).text);
    await c.get('/login');
    const wrong = await c.request('POST', '/login', { form: { _csrf: foreignToken, email: user.email, password: DEFAULT_PASSWORD } });
    expect(wrong.status).toBe(403);
    expect(c.jar.has('session_id')).toBe(false);

    // No cookie at all (a cross-site post from a fresh browser): refused too.
    const bare = await fetch(`${t.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: foreignToken, email: user.email, password: DEFAULT_PASSWORD }),
      redirect: 'manual',
    });
    expect(bare.status).toBe(403);
  });

  it('when the token is right but the browser says the post came from another origin, then 403', async () => {
    const user = await makeUser(t, { email: uniqueEmail('origin') });
    const r = await client().submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD }, { headers: { origin: 'https://evil.example' } });
    expect(r.status).toBe(403);
  });

  it('when a browser signs in, then a token planted or read before is refused after (the binding turns over), and signing out turns it over again', async () => {
    const user = await makeUser(t, { email: uniqueEmail('rotate') });
    // The attacker's own visit: a binding cookie and the token signed over it.
    const attacker = client();
    const planted = csrfIn((await attacker.get('/login')).text);
    const victim = client();
    victim.jar.set('gh_csrf', attacker.jar.get('gh_csrf')!);
    // Before sign-in the planted pair is valid (that is the attack): the victim signs in with it.
    const login = await victim.request('POST', '/login', { form: { _csrf: planted, email: user.email, password: DEFAULT_PASSWORD } });
    expect(login.status).toBe(303);
    const rotated = victim.setCookies.filter((l) => l.startsWith('gh_csrf=')).at(-1)!;
    expect(rotated).toMatch(/HttpOnly/);
    expect(rotated).toMatch(/SameSite=Lax/);
    expect(victim.jar.get('gh_csrf')).not.toBe(attacker.jar.get('gh_csrf'));
    // After it, the planted token posts nothing.
    const forged = await victim.request('POST', '/account/profile', { form: { _csrf: planted, name: 'Pwned' } });
    expect(forged.status).toBe(403);
    expect((await t.app.services.users.get(user.id)).name).not.toBe('Pwned');
    // The signed-in page carries a token of the new binding, which works.
    const fresh = csrfIn((await victim.get('/account')).text);
    expect(fresh).not.toBe(planted);
    expect((await victim.request('POST', '/account/profile', { form: { _csrf: fresh, name: 'Mine' } })).status).toBe(303);
    // Signing out turns it over again: the signed-in token is refused on the sign-in form.
    expect((await victim.request('POST', '/logout', { form: { _csrf: fresh } })).status).toBe(303);
    const again = await victim.request('POST', '/login', { form: { _csrf: fresh, email: user.email, password: DEFAULT_PASSWORD } });
    expect(again.status).toBe(403);
    expect(victim.jar.has('session_id')).toBe(false);
  });

  it('when a session begins through the API in the same browser (as passkey autofill and social callbacks do), then the binding turns over too; a refresh keeps it; an API sign-out turns it over', async () => {
    const user = await makeUser(t, { email: uniqueEmail('api-rotate') });
    const c = client();
    const before = csrfIn((await c.get('/login')).text);
    const binding = c.jar.get('gh_csrf');
    const login = await c.request('POST', '/auth/login', { json: { email: user.email, password: DEFAULT_PASSWORD } });
    expect(login.status, login.text).toBe(200);
    expect(c.jar.has('session_id')).toBe(true);
    expect(c.jar.get('gh_csrf')).not.toBe(binding);
    // The token of the page opened before the sign-in posts nothing now.
    expect((await c.request('POST', '/account/profile', { form: { _csrf: before, name: 'Pwned' } })).status).toBe(403);
    const fresh = csrfIn((await c.get('/account')).text);
    const signedIn = c.jar.get('gh_csrf');
    // A page's script posting with the cookie names its origin, as a browser does (the API's CSRF rule).
    const origin = { origin: t.app.config.publicBaseUrl.replace(/\/$/, '') };
    const refreshed = await c.request('POST', '/auth/refresh', { json: {}, headers: origin });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.headers.get('set-cookie') ?? '').not.toMatch(/gh_csrf=/);
    expect(c.jar.get('gh_csrf')).toBe(signedIn);
    expect((await c.request('POST', '/account/profile', { form: { _csrf: fresh, name: 'Mine' } })).status).toBe(303);
    expect((await c.request('POST', '/auth/logout', { json: {}, headers: origin })).status).toBe(200);
    expect(c.jar.get('gh_csrf')).not.toBe(signedIn);
  });

  it('when logout is posted without the token, then the session stays', async () => {
    const user = await makeUser(t, { email: uniqueEmail('logout') });
    const c = client();
    await signIn(c, user.email);
    expect((await c.request('POST', '/logout', { form: {} })).status).toBe(403);
    expect((await c.get('/account')).status).toBe(200);
    const out = await c.submit('/account', '/logout', {});
    expect(out.status).toBe(303);
    expect((await c.get('/account')).location).toBe('/login?return_to=%2Faccount');
  });
});

describe('sign-in', () => {
  it('when the password is right, then 303 to /account with an HttpOnly SameSite=Lax session cookie (not Secure on http://localhost)', async () => {
    const user = await makeUser(t, { email: uniqueEmail('ok') });
    const c = client();
    const r = await signIn(c, user.email);
    expect(r.status).toBe(303);
    expect(r.location).toBe('/account');
    const cookie = c.setCookies.find((l) => l.startsWith('session_id='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    const csrfCookie = c.setCookies.find((l) => l.startsWith('gh_csrf='))!;
    expect(csrfCookie).toMatch(/HttpOnly/);
    expect(csrfCookie).toMatch(/SameSite=Lax/);
    // The page's session is the API's: the same cookie validates there.
    const me = await t.request('GET', '/auth/me', { session: c.jar.get('session_id') });
    expect(me.body.data.user.email).toBe(user.email);
  });

  it('when the password is wrong, then 401 with the form again and no session; the failure is the API one', async () => {
    const user = await makeUser(t, { email: uniqueEmail('bad') });
    const c = client();
    const r = await c.submit('/login', '/login', { email: user.email, password: 'wrong-password-1' });
    expect(r.status).toBe(401);
    expect(r.text).toContain('is not right');
    expect(r.text).toContain(`value="${user.email}"`);
    expect(c.jar.has('session_id')).toBe(false);
  });

  it('when return_to is a same-origin path or an allow-listed origin, then the sign-in ends there; a signed-in browser goes straight on', async () => {
    const user = await makeUser(t, { email: uniqueEmail('rt') });
    const c = client();
    expect((await signIn(c, user.email, '/oauth/authorize?client_id=x&state=y')).location).toBe('/oauth/authorize?client_id=x&state=y');
    const straight = await c.get(`/login?return_to=${encodeURIComponent('/somewhere?a=1')}`);
    expect(straight.status).toBe(303);
    expect(straight.location).toBe('/somewhere?a=1');
    const allowed = await c.get(`/login?return_to=${encodeURIComponent('https://app.example.test/after')}`);
    expect(allowed.location).toBe('https://app.example.test/after');
    // The allow-listed origin may receive the post's redirect (form-action).
    expect((await client().get('/login')).headers.get('content-security-policy')).toContain("form-action 'self' https://app.example.test;");
  });

  it('when return_to names a foreign host, a protocol-relative or a javascript: URL, then 400 and nothing signs in or redirects', async () => {
    const user = await makeUser(t, { email: uniqueEmail('evil') });
    for (const bad of ['https://evil.example/x', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', 'https://app.example.test.evil.example/']) {
      const page = await client().get(`/login?return_to=${encodeURIComponent(bad)}`);
      expect(page.status, bad).toBe(400);
      expect(page.text).toContain('Return address not allowed');
      const c = client();
      await c.get('/login');
      const post = await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD, return_to: bad });
      expect(post.status, bad).toBe(400);
      expect(c.jar.has('session_id'), bad).toBe(false);
    }
  });

  it("when a user's name carries markup, then the account page shows it as text", async () => {
    const user = await makeUser(t, { email: uniqueEmail('xss'), name: '<script>alert(1)</script><img src=x onerror=alert(2)>' });
    const c = client();
    await signIn(c, user.email);
    const page = await c.get('/account');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;');
    expect(page.text).not.toContain('<script>alert(1)');
  });
});

describe('account flows', () => {
  it('when WEB_PAGES is on, then the reset mail links to /reset-password on this server, and the page sets the new password', async () => {
    const user = await makeUser(t, { email: uniqueEmail('reset') });
    const c = client();
    const sent = await c.submit('/forgot-password', '/forgot-password', { email: user.email });
    expect(sent.status).toBe(303);
    expect(sent.location).toBe('/forgot-password?sent=1');
    const link = linkIn(await mailTo(smtp, user.email, /reset/i));
    expect(link.pathname).toBe('/reset-password');
    const path = link.pathname + link.search;
    const done = await c.submit(path, '/reset-password', { token: link.searchParams.get('token')!, password: 'A-new-password-77' });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/login?done=reset');
    expect((await t.request('POST', '/auth/login', { body: { email: user.email, password: 'A-new-password-77' } })).status).toBe(200);
    // The link is used up.
    expect((await c.get(path)).status).toBe(400);
  });

  it("when WEB_PAGES is on, then a security notice's reset link opens the hosted /forgot-password page (a link without a token)", async () => {
    const user = await makeUser(t, { email: uniqueEmail('notice') });
    const login = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    const changed = await t.request('POST', '/auth/password-change/self', {
      session: login.body.session_id as string,
      body: { current_password: DEFAULT_PASSWORD, new_password: 'Notice-New-Pass-55' },
    });
    expect(changed.status).toBe(200);
    const mail = await mailTo(smtp, user.email, /password was changed/);
    // The public URL (the test app's names port 0), then the hosted page's path.
    expect(mail.text).toMatch(/right away: http:\/\/127\.0\.0\.1:\d+\/forgot-password\n/);
    expect(mail.text).not.toContain('/reset-password');
    const page = await client().get('/forgot-password');
    expect(page.status).toBe(200);
  });

  it('when the verification page is opened, then nothing is used until the button is pressed', async () => {
    const user = await makeUser(t, { email: uniqueEmail('verify'), is_verified: false });
    const sent = await t.request('POST', '/auth/resend-verification', { body: { email: user.email } });
    expect(sent.status).toBe(200);
    const link = linkIn(await mailTo(smtp, user.email, /verify/i));
    expect(link.pathname).toBe('/verify-email');
    const c = client();
    const path = link.pathname + link.search;
    expect((await c.get(path)).status).toBe(200);
    expect((await t.app.repos.users.findById(user.id))?.is_verified).toBeFalsy();
    const ok = await c.submit(path, '/verify-email', { token: link.searchParams.get('token')! });
    expect(ok.location).toBe('/login?done=verified');
    expect((await t.app.repos.users.findById(user.id))?.is_verified).toBeTruthy();
  });

  it('when someone registers on the page, then the API registration runs and the browser is signed in', async () => {
    const c = client();
    const email = uniqueEmail('reg');
    const r = await c.submit('/register', '/register', { name: 'New Person', email, password: 'Register-Pass-88' });
    expect(r.status).toBe(303);
    expect(r.location).toBe('/account');
    expect((await c.get('/account')).text).toContain('New Person');
    const weak = await client().submit('/register', '/register', { email: uniqueEmail('weak'), password: 'x' });
    expect(weak.status).toBe(400);
  });
});

describe('rate limits', () => {
  let tight: TestApp;
  beforeAll(async () => {
    tight = await startTestApp({ env: { RATE_LIMIT_LOGIN: '3/1m' } });
  });
  afterAll(async () => tight?.close());

  it('when the page posts more logins than the login class allows, then 429 with Retry-After, counted with the API', async () => {
    const user = await makeUser(tight, { email: uniqueEmail('limit') });
    const c = new WebClient(tight.url);
    const page = await c.get('/login');
    const token = csrfIn(page.text);
    const first = await c.request('POST', '/login', { form: { _csrf: token, email: user.email, password: 'wrong-1' } });
    expect(first.status).toBe(401);
    expect(first.headers.get('x-ratelimit-limit')).toBe('3');
    // The API shares the budget: one more there, then the page is refused.
    await tight.request('POST', '/auth/login', { body: { email: user.email, password: 'wrong-2' } });
    await c.request('POST', '/login', { form: { _csrf: token, email: user.email, password: 'wrong-3' } });
    const refused = await c.request('POST', '/login', { form: { _csrf: token, email: user.email, password: DEFAULT_PASSWORD } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.text).toContain('Too many attempts');
    expect(c.jar.has('session_id')).toBe(false);
  });
});

describe('social buttons', () => {
  let social: TestApp;
  beforeAll(async () => {
    social = await startTestApp({
      env: socialEnv({ github: { client_id: 'gh-id', client_secret: 'gh-secret' } }, { SOCIAL_REDIRECT_ALLOWLIST: `${RETURN_ORIGIN},${PUBLIC}` }),
    });
  });
  afterAll(async () => social?.close());

  it("when a provider is configured, then /login links to its sign-in with the page's destination as return_to", async () => {
    const page = await new WebClient(social.url).get('/login?return_to=%2Fafter');
    expect(page.status).toBe(200);
    const href = /<a class="button secondary" href="([^"]+)">Continue with GitHub<\/a>/.exec(page.text)?.[1];
    expect(href?.replace(/&amp;/g, '&')).toBe(`/auth/social/github/login?return_to=${encodeURIComponent(`${PUBLIC}/after`)}`);
    // Cookies are Secure on a public URL that is not this machine's plain http.
    const c = new WebClient(social.url);
    await c.get('/login');
    expect(c.setCookies.find((l) => l.startsWith('gh_csrf='))).toMatch(/; Secure/);
  });
});
