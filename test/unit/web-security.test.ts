import { describe, expect, it } from 'vitest';
import { pickLang } from '../../src/web/i18n.js';
import { checkReturnTo, pageCsp, webCookieSecure } from '../../src/web/page-security.js';

const config = {
  publicBaseUrl: 'https://auth.example.test',
  socialRedirectAllowlist: ['https://app.example.test', 'not a url'],
  cookieSecret: 'x'.repeat(32),
  bridgeSecret: undefined,
};

describe('return_to', () => {
  it('when it is a same-origin path, this server or an allow-listed origin, then it is kept', () => {
    expect(checkReturnTo(undefined, config)).toEqual({ ok: true, to: null });
    expect(checkReturnTo('', config)).toEqual({ ok: true, to: null });
    expect(checkReturnTo('/oauth/authorize?x=1', config)).toEqual({ ok: true, to: '/oauth/authorize?x=1' });
    expect(checkReturnTo('https://app.example.test/a?b=1', config)).toEqual({ ok: true, to: 'https://app.example.test/a?b=1' });
    expect(checkReturnTo('https://auth.example.test/account', config)).toEqual({ ok: true, to: 'https://auth.example.test/account' });
  });

  it('when it leaves for anywhere else, then it is refused', () => {
    for (const bad of [
      '//evil.example/x',
      '/\\evil.example',
      'https://evil.example/',
      'http://app.example.test/', // another scheme is another origin
      'https://app.example.test.evil.example/',
      'https://user:pw@app.example.test/',
      'javascript:alert(1)',
      'data:text/html,x',
      '/ok\nSet-Cookie: x',
      'x'.repeat(2001),
      ['/a'],
    ])
      expect(checkReturnTo(bad, config), String(bad)).toEqual({ ok: false });
  });
});

describe('page CSP and cookies', () => {
  it('allows scripts and styles by nonce only, posts to itself and the allow-list, and no framing', () => {
    const csp = pageCsp('abc', config);
    expect(csp).toContain("script-src 'nonce-abc'");
    expect(csp).toContain("style-src 'self' 'nonce-abc'");
    expect(csp).toContain("form-action 'self' https://app.example.test;");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe/);
  });

  it('marks cookies Secure except on plain http on this machine', () => {
    expect(webCookieSecure({ publicBaseUrl: 'https://auth.example.test' })).toBe(true);
    expect(webCookieSecure({ publicBaseUrl: 'http://auth.example.test' })).toBe(true);
    expect(webCookieSecure({ publicBaseUrl: 'http://localhost:3000' })).toBe(false);
    expect(webCookieSecure({ publicBaseUrl: 'http://127.0.0.1:3000' })).toBe(false);
  });
});

describe('language', () => {
  it("takes the user's lang, else the best Accept-Language the pages speak, else English", () => {
    expect(pickLang('es', 'en')).toBe('es');
    expect(pickLang('fr', 'es-MX,en;q=0.5')).toBe('es');
    expect(pickLang(null, 'fr, en;q=0.9, es;q=0.95')).toBe('es');
    expect(pickLang(null, 'es;q=0, en')).toBe('en');
    expect(pickLang(null, 'de')).toBe('en');
    expect(pickLang(undefined, undefined)).toBe('en');
  });
});

describe('strings', () => {
  it('has every English string in Spanish too', async () => {
    const { loadStrings } = await import('../../src/web/i18n.js');
    const { findPackageRoot } = await import('../../src/mail/package-root.js');
    const s = loadStrings(`${findPackageRoot()}/templates/web/i18n`);
    expect(Object.keys(s.es).sort()).toEqual(Object.keys(s.en).sort());
  });

  it("has every module page string in Spanish too, each key under the module's id", async () => {
    const { existsSync, readdirSync } = await import('node:fs');
    const { loadStrings } = await import('../../src/web/i18n.js');
    const { findPackageRoot } = await import('../../src/mail/package-root.js');
    const root = `${findPackageRoot()}/modules`;
    const withPages = readdirSync(root).filter((id) => existsSync(`${root}/${id}/web/i18n`));
    expect(withPages.length).toBeGreaterThan(0);
    for (const id of withPages) {
      const s = loadStrings(`${root}/${id}/web/i18n`);
      expect(Object.keys(s.es).sort()).toEqual(Object.keys(s.en).sort());
      expect(Object.keys(s.en).filter((k) => !k.startsWith(`${id}.`))).toEqual([]);
    }
  });
});
