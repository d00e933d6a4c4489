import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * A web site in front of the app, as a reverse proxy at the public URL is: it serves a small test page
 * (and @simplewebauthn/browser's bundle, from node_modules) under /__test/ and passes every other
 * request to the app. The page's origin is the site's (`http://localhost:<port>`, a secure context whose
 * host is the RP ID `localhost`); a second site on another port is an origin the app does not allow.
 */
export interface Site {
  /** `http://localhost:<port>`: the page's origin. */
  origin: string;
  /** The page that carries the passkey calls (`window.passkeys`). */
  page: string;
  /** Where the requests other than /__test/ go (the app's URL, set once the app runs). */
  target: string;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);
const BUNDLE = readFileSync(path.join(path.dirname(require.resolve('@simplewebauthn/browser')), '../dist/bundle/index.umd.min.js'));

/** As strict as the app's own pages: scripts and requests from this origin only, nothing inline. */
const CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Passkeys test page</title>
<script src="/__test/simplewebauthn-browser.js"></script>
<script src="/__test/page.js"></script>
</head><body>
<form><label>Email <input id="username" name="username" autocomplete="username webauthn"></label></form>
</body></html>`;

/**
 * The page's script: each call asks the app for options with fetch, runs the ceremony through
 * @simplewebauthn/browser, and posts the result; every `navigator.credentials.get` is noted with its
 * mediation, so a test can tell a conditional (autofill) request from a modal one.
 */
const PAGE_JS = `'use strict';
(() => {
  const { startRegistration, startAuthentication, browserSupportsWebAuthnAutofill } = SimpleWebAuthnBrowser;
  const gets = [];
  const get = navigator.credentials.get.bind(navigator.credentials);
  navigator.credentials.get = (o) => {
    gets.push({ mediation: (o && o.mediation) || null, allowCredentials: o && o.publicKey && o.publicKey.allowCredentials ? o.publicKey.allowCredentials.length : 0 });
    return get(o);
  };
  async function api(method, path, body, session) {
    const headers = {};
    if (session) headers['X-Session-ID'] = session;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
    return { status: r.status, body: await r.json() };
  }
  async function ceremony(fn) {
    try {
      return { credential: await fn() };
    } catch (e) {
      return { error: String((e && e.name) || e) + ': ' + String(e && e.message) };
    }
  }
  // userVerification: a page may ask for less than the options say ('discouraged': no UV flag).
  async function signIn(useBrowserAutofill, userVerification) {
    const o = await api('POST', '/auth/passkeys/login/options', {});
    if (o.status !== 200) return { options: o };
    const optionsJSON = userVerification ? { ...o.body.options, userVerification } : o.body.options;
    const c = await ceremony(() => startAuthentication({ optionsJSON, useBrowserAutofill }));
    if (c.error) return c;
    return { credential: c.credential, verify: await api('POST', '/auth/passkeys/login/verify', { credential: c.credential }) };
  }
  window.passkeys = {
    gets,
    api,
    autofillSupported: () => browserSupportsWebAuthnAutofill(),
    async register(session, name) {
      const o = await api('POST', '/auth/passkeys/register/options', {}, session);
      if (o.status !== 200) return { options: o };
      const c = await ceremony(() => startRegistration({ optionsJSON: o.body.options }));
      if (c.error) return c;
      return { credential: c.credential, verify: await api('POST', '/auth/passkeys/register/verify', { credential: c.credential, name }, session) };
    },
    signIn: (userVerification) => signIn(false, userVerification),
    // A pending session finished with a passkey as its second factor: methods, start, the ceremony, verify.
    async secondFactor(session, userVerification) {
      const methods = await api('GET', '/auth/two_factor/methods', undefined, session);
      const method = ((methods.body && methods.body.methods) || []).find((m) => m.type === 'passkey');
      if (!method) return { methods };
      const o = await api('POST', '/auth/two_factor/passkey/start', {}, session);
      if (o.status !== 200) return { methods, options: o };
      const optionsJSON = userVerification ? { ...o.body.options, userVerification } : o.body.options;
      const c = await ceremony(() => startAuthentication({ optionsJSON }));
      if (c.error) return { methods, ...c };
      const body = { method_id: method.id, credential: c.credential, action: 'login' };
      return { methods, credential: c.credential, verify: await api('POST', '/auth/two_factor/verify', body, session) };
    },
    autofill: () => signIn(true),
  };
})();
`;

const STATIC: Record<string, { type: string; body: string | Buffer }> = {
  '/__test/passkeys.html': { type: 'text/html; charset=utf-8', body: HTML },
  '/__test/page.js': { type: 'text/javascript; charset=utf-8', body: PAGE_JS },
  '/__test/simplewebauthn-browser.js': { type: 'text/javascript; charset=utf-8', body: BUNDLE },
};

export async function startSite(): Promise<Site> {
  const site = { target: '' } as Site;
  const server = http.createServer((req, res) => {
    const file = STATIC[(req.url ?? '').split('?')[0]];
    if (file) {
      res.writeHead(200, { 'Content-Type': file.type, 'Content-Security-Policy': CSP, 'Cache-Control': 'no-store' });
      res.end(file.body);
      return;
    }
    const up = http.request(site.target + (req.url ?? '/'), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => {
      res.writeHead(502).end();
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  site.origin = `http://localhost:${port}`;
  site.page = `${site.origin}/__test/passkeys.html`;
  site.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return site;
}
