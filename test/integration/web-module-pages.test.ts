import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry as shipped } from '../../modules/index.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { WebClient } from '../helpers/web-client.js';
import { testModule } from './module-helpers.js';

// A module's own pages (its manifest's `web.pages`, issue 61): a public page, a signed-in one and a form post,
// rendered from the module's folder with its strings, behind core's checks (session, CSRF), gone when it is.
const dir = mkdtempSync(path.join(tmpdir(), 'gh-web-pages-'));
mkdirSync(path.join(dir, 'i18n'));
writeFileSync(path.join(dir, 'hello.eta'), "<h1 data-hello><%= it.t('test-pages.hello', { who: it.who }) %></h1>\n");
writeFileSync(path.join(dir, 'i18n', 'en.json'), JSON.stringify({ 'test-pages.hello': 'Hello {who}' }));
writeFileSync(path.join(dir, 'i18n', 'es.json'), JSON.stringify({ 'test-pages.hello': 'Hola {who}' }));

const pages = testModule('test-pages', {
  web: {
    dir,
    pages: [
      { method: 'get', path: '/test-pages/hello', auth: 'public', handler: async (kit) => kit.render('hello', { who: kit.session?.user.email ?? 'stranger' }) },
      { method: 'get', path: '/test-pages/mine/:name', auth: 'session', handler: async (kit) => kit.render('hello', { who: kit.params.name }) },
      {
        method: 'post',
        path: '/test-pages/echo',
        auth: 'session',
        handler: async (kit) => kit.message(200, { title: 'Echo', text: `said ${kit.field('word', 20)}` }),
      },
    ],
  },
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.modules.setRegistry([...shipped, pages]);
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a module's own pages", () => {
  it('when installed, then its pages answer with its template and strings, escaped, behind the session and CSRF checks; uninstalled, the 404 page', async () => {
    const anon = new WebClient(t.url);
    expect((await anon.get('/test-pages/hello')).status).toBe(404);
    await t.app.modules.hub.install(['test-pages']);

    const hello = await anon.get('/test-pages/hello');
    expect(hello.status).toBe(200);
    expect(hello.text).toContain('<h1 data-hello>Hello stranger</h1>');
    expect(hello.headers.get('content-security-policy')).toMatch(/nonce-/);
    // A signed-in page: the sign-in page first, with the way back.
    const mine = await anon.get('/test-pages/mine/x');
    expect(mine.status).toBe(303);
    expect(mine.location).toBe('/login?return_to=%2Ftest-pages%2Fmine%2Fx');

    const user = await makeUser(t, { email: uniqueEmail('pages') });
    const c = new WebClient(t.url, { 'accept-language': 'es' });
    expect((await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(303);
    const named = await c.get(`/test-pages/mine/${encodeURIComponent('<b>')}`);
    expect(named.status).toBe(200);
    expect(named.text).toContain('Hola &lt;b&gt;');
    // A post without the token is the 403 page; with it, the handler's answer.
    expect((await c.request('POST', '/test-pages/echo', { form: { word: 'hi' } })).status).toBe(403);
    const echoed = await c.submit('/test-pages/hello', '/test-pages/echo', { word: 'hi' });
    expect(echoed.status).toBe(200);
    expect(echoed.text).toContain('said hi');

    await t.app.modules.hub.uninstall('test-pages');
    expect((await anon.get('/test-pages/hello')).status).toBe(404);
  });
});
