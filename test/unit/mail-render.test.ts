import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findPackageRoot } from '../../src/mail/package-root.js';
import { EMAIL_TEMPLATES, renderEmail, type EmailTemplateName } from '../../src/mail/render.js';
import { escapeHtml, renderTemplate } from '../../src/mail/template-engine.js';

const branding = { productName: 'Acme ID', brandColor: '#12ab34', publicUrl: 'https://id.acme.test/' };
const LINK = 'https://app.acme.test/verify?token=tok123&next=%2Fhome';
const CODE = '482913';

const RESET_PAGE = 'https://app.acme.test/reset-password';
/** What every security notice gets (src/audit/security-notices.ts). */
const NOTICE = { name: 'Ana', time: '2026-11-21 14:05 UTC', ip: '203.0.113.9', device: 'Firefox, Linux', resetUrl: RESET_PAGE };
const NOTICE_SHOWS = ['2026-11-21 14:05 UTC', '203.0.113.9', 'Firefox, Linux', RESET_PAGE];

const DATA: Record<EmailTemplateName, Record<string, string | number>> = {
  'verify-email': { name: 'Ana', link: LINK },
  'password-reset': { name: 'Ana', link: LINK, expiresMinutes: 60 },
  'login-link': { name: 'Ana', link: LINK, code: CODE, expiresMinutes: 15 },
  test: {},
  'new-device-sign-in': NOTICE,
  'password-changed': NOTICE,
  'password-was-reset': NOTICE,
  'email-changed': { ...NOTICE, newEmail: 'n***@example.test' },
  'two-factor-disabled': NOTICE,
  'two-factor-reset': NOTICE,
  'social-linked': { ...NOTICE, provider: 'GitHub' },
  'social-unlinked': { ...NOTICE, provider: 'GitHub' },
  'passkey-added': { ...NOTICE, passkeyName: 'Work laptop' },
  'passkey-removed': { ...NOTICE, passkeyName: 'Work laptop' },
  'email-change-requested': { ...NOTICE, newEmail: 'n***@example.test' },
  'email-change-confirm': { name: 'Ana', link: LINK, expiresMinutes: 60, currentEmail: 'a***@example.test' },
  'email-change-address-in-use': { resetUrl: RESET_PAGE },
  'registration-address-in-use': { name: 'Ana', resetUrl: RESET_PAGE },
};

/** What must reach the reader of each message, in both parts. */
const MUST_SHOW: Record<EmailTemplateName, string[]> = {
  'verify-email': [LINK],
  'password-reset': [LINK, '60'],
  'login-link': [LINK, CODE, '15'],
  test: ['https://id.acme.test'],
  'new-device-sign-in': NOTICE_SHOWS,
  'password-changed': NOTICE_SHOWS,
  'password-was-reset': NOTICE_SHOWS,
  'email-changed': [...NOTICE_SHOWS, 'n***@example.test'],
  'two-factor-disabled': NOTICE_SHOWS,
  'two-factor-reset': NOTICE_SHOWS,
  'social-linked': [...NOTICE_SHOWS, 'GitHub'],
  'social-unlinked': [...NOTICE_SHOWS, 'GitHub'],
  'passkey-added': [...NOTICE_SHOWS, 'Work laptop'],
  'passkey-removed': [...NOTICE_SHOWS, 'Work laptop'],
  'email-change-requested': [...NOTICE_SHOWS, 'n***@example.test'],
  'email-change-confirm': [LINK, '60', 'a***@example.test'],
  'email-change-address-in-use': [RESET_PAGE],
  'registration-address-in-use': ['Ana', RESET_PAGE],
};

const htmlOf = (s: string) => escapeHtml(s);

describe('renderEmail', () => {
  describe.each(EMAIL_TEMPLATES)('template %s', (template) => {
    it.each(['en', 'es'])('when rendered in %s, then subject, html and text are filled in with its data', (lang) => {
      const out = renderEmail(template, lang, DATA[template], branding);
      expect(out.lang).toBe(lang);
      expect(out.subject).toContain('Acme ID');
      expect(out.subject).not.toMatch(/[\r\n{}]/);
      expect(out.html).toMatch(/^<!doctype html>/);
      expect(out.html).toContain(`lang="${lang}"`);
      expect(out.html).toContain('#12ab34');
      for (const value of MUST_SHOW[template]) {
        expect(out.text).toContain(value);
        expect(out.html).toContain(htmlOf(value));
      }
      // No tag may survive rendering.
      expect(out.html).not.toMatch(/\{\{|\}\}/);
      expect(out.text).not.toMatch(/\{\{|\}\}/);
    });

    it('when rendered in en and in es, then subject, html and text differ', () => {
      const en = renderEmail(template, 'en', DATA[template], branding);
      const es = renderEmail(template, 'es', DATA[template], branding);
      expect(es.subject).not.toBe(en.subject);
      expect(es.html).not.toBe(en.html);
      expect(es.text).not.toBe(en.text);
    });
  });

  it('when a name holds markup, then the HTML part shows it escaped and the text part as typed', () => {
    const name = '<script>alert("x")</script>';
    const out = renderEmail('verify-email', 'en', { name, link: LINK }, branding);
    expect(out.html).not.toContain('<script>');
    expect(out.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(out.text).toContain(name);
  });

  it('when a link carries query parameters, then its href is attribute-escaped', () => {
    const out = renderEmail('verify-email', 'en', { link: LINK }, branding);
    expect(out.html).toContain(`href="${LINK.replace('&', '&amp;')}"`);
  });

  it('when a value holds a quote meant to break out of an attribute, then it stays inside the attribute', () => {
    const out = renderEmail('verify-email', 'en', { link: 'https://x.test/" onmouseover="alert(1)' }, branding);
    expect(out.html).not.toContain('" onmouseover="');
    expect(out.html).toContain('&quot; onmouseover=&quot;');
  });

  it('when a value holds line breaks, then the plain-text part keeps it on one line', () => {
    const out = renderEmail('verify-email', 'en', { name: 'Ana\r\nClick https://evil.test', link: LINK }, branding);
    expect(out.text).toContain('Hi Ana Click https://evil.test,');
  });

  it('when the link uses a javascript: scheme, then rendering refuses it', () => {
    expect(() => renderEmail('verify-email', 'en', { link: ' JavaScript:alert(1)' }, branding)).toThrow(/forbidden scheme/);
  });

  it.each([
    ['fr', 'en'],
    ['es-MX', 'es'],
    ['ES', 'es'],
    [null, 'en'],
    [undefined, 'en'],
    ['../../etc', 'en'],
  ])('when the language is %s, then the message is rendered in %s', (lang, expected) => {
    const out = renderEmail('password-reset', lang, DATA['password-reset'], branding);
    expect(out.lang).toBe(expected);
    expect(out.subject).toBe(renderEmail('password-reset', expected, DATA['password-reset'], branding).subject);
  });

  it('when the template name is unknown, then it throws naming the known ones', () => {
    expect(() => renderEmail('welcome', 'en', {}, branding)).toThrow(/Unknown email template "welcome".*verify-email/);
  });

  it('when required data is missing, then it throws naming the key', () => {
    expect(() => renderEmail('password-reset', 'en', { name: 'Ana' }, branding)).toThrow(/needs data: link/);
    expect(() => renderEmail('login-link', 'en', { name: 'Ana' }, branding)).toThrow(/at least one of: link, code/);
  });

  it('when a login message has only a code, then it shows the code and no sign-in button', () => {
    const out = renderEmail('login-link', 'en', { code: CODE, expiresMinutes: 15 }, branding);
    expect(out.html).toContain(CODE);
    expect(out.html).not.toContain('href="https://app.acme.test');
    expect(out.text).toContain(`Enter this code: ${CODE}`);
    expect(out.text).toContain('The code expires in 15 minutes');
  });

  it('when a login message has only a link, then it shows no code block', () => {
    const out = renderEmail('login-link', 'en', { link: LINK }, branding);
    expect(out.text).toContain(LINK);
    expect(out.text).not.toMatch(/enter this code/i);
  });

  it('when no name is given, then the greeting has no dangling separator', () => {
    const out = renderEmail('login-link', 'es', { code: CODE }, branding);
    expect(out.text.split('\n')).toContain('Hola:');
  });

  it("when a module's message is rendered from its own folder, then it uses the module's subjects, the core layout and the language fallback", () => {
    const source = { dir: path.join(findPackageRoot(), 'modules', 'two-factor', 'emails'), required: { code: { all: ['code'] }, changed: {} } };
    const es = renderEmail('code', 'es-MX', { name: '<b>Ana</b>', code: CODE, expiresMinutes: 10 }, branding, source);
    expect(es.lang).toBe('es');
    expect(es.subject).toBe('Tu código de verificación de Acme ID');
    expect(es.text).toContain(CODE);
    expect(es.html).toContain('&lt;b&gt;Ana&lt;/b&gt;');
    expect(es.text).toContain('Este es un mensaje automático de Acme ID');
    expect(renderEmail('code', 'de', { code: CODE, expiresMinutes: 10 }, branding, source).subject).toBe('Your Acme ID verification code');
    expect(() => renderEmail('code', 'en', {}, branding, source)).toThrow(/needs data: code/);
    expect(() => renderEmail('nope', 'en', {}, branding, source)).toThrow(/Unknown email template/);
    expect(() => renderEmail('../two-factor/code', 'en', {}, branding)).toThrow(/Unknown email template/);
  });

  it('when the brand colour is not a hex colour, then the default colour is used', () => {
    const out = renderEmail('test', 'en', {}, { ...branding, brandColor: 'red;background:url(x)' });
    expect(out.html).not.toContain('url(x)');
    expect(out.html).toContain('#2f6fed');
  });

  it('when data names a branding key, then branding wins', () => {
    const out = renderEmail('test', 'en', { productName: 'Evil Corp' }, branding);
    expect(out.subject).toBe('Acme ID test message');
  });

  it('when a security notice lacks its time or reset page, then it throws rather than send half a notice', () => {
    expect(() => renderEmail('new-device-sign-in', 'en', { ...NOTICE, time: undefined }, branding)).toThrow(/needs data: time/);
    expect(() => renderEmail('password-changed', 'es', { ...NOTICE, resetUrl: '' }, branding)).toThrow(/needs data: resetUrl/);
  });

  it('when a notice has a support address or names an admin, then it says so; without, it points to the administrator', () => {
    const withSupport = renderEmail('password-changed', 'en', { ...NOTICE, supportEmail: 'help@acme.test', byAdmin: '1' }, branding);
    expect(withSupport.text).toContain('changed by an administrator.');
    expect(withSupport.text).toContain('write to help@acme.test');
    expect(withSupport.html).toContain('href="mailto:help@acme.test"');
    const plain = renderEmail('password-changed', 'es', NOTICE, branding);
    expect(plain.text).toContain('avisa al administrador de Acme ID');
    expect(plain.text).not.toContain('por un administrador');
  });

  it('when data holds a partial tag, then it stays text; a template naming a missing partial throws', () => {
    const out = renderEmail('password-changed', 'en', { ...NOTICE, name: '{{> security-notice}}' }, branding);
    expect(out.text).toContain('Hi {{> security-notice}},');
    expect(out.text.match(/If not, reset your password/g)).toHaveLength(1);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-partial-'));
    try {
      mkdirSync(path.join(dir, 'en'));
      writeFileSync(path.join(dir, 'en', 'strings.json'), JSON.stringify({ subjects: { note: 'Note from {{productName}}' } }));
      writeFileSync(path.join(dir, 'en', 'note.html'), '<p>x</p>{{> nowhere}}');
      writeFileSync(path.join(dir, 'en', 'note.txt'), 'x');
      expect(() => renderEmail('note', 'en', {}, branding, { dir, required: { note: {} } })).toThrow(/partial "nowhere" is missing/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when an appUrl is given, then the footer links to it', () => {
    const out = renderEmail('password-changed', 'en', NOTICE, { ...branding, appUrl: 'https://app.acme.test/' });
    expect(out.html).toContain('href="https://app.acme.test"');
    expect(out.text.trimEnd().endsWith('https://app.acme.test')).toBe(true);
  });
});

describe('renderTemplate', () => {
  it('when a template uses {{{x}}} for a name not allowed raw, then it throws', () => {
    expect(() => renderTemplate('<p>{{{name}}}</p>', { name: '<b>' }, { html: true })).toThrow(/not allowed/);
  });

  it('when a value itself looks like a tag, then it is not expanded', () => {
    const out = renderTemplate('{{a}}', { a: '{{b}}', b: 'secret' }, { html: false });
    expect(out).toBe('{{b}}');
  });

  it('when sections nest, then each follows its own value', () => {
    const tpl = '{{#a}}A{{#b}}B{{/b}}{{^b}}-{{/b}}{{/a}}{{^a}}none{{/a}}';
    expect(renderTemplate(tpl, { a: '1', b: '1' }, { html: false })).toBe('AB');
    expect(renderTemplate(tpl, { a: '1' }, { html: false })).toBe('A-');
    expect(renderTemplate(tpl, {}, { html: false })).toBe('none');
  });
});

describe('findPackageRoot', () => {
  it('when called from a compiled file under dist/src/mail, then it finds the directory holding package.json', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-root-'));
    try {
      writeFileSync(path.join(root, 'package.json'), '{}');
      const compiled = pathToFileURL(path.join(root, 'dist', 'src', 'mail', 'render.js')).href;
      expect(findPackageRoot(compiled)).toBe(root);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('when called from the sources, then it finds the repository root holding templates/emails', () => {
    const root = findPackageRoot();
    expect(path.join(root, 'src', 'mail')).toBe(path.resolve(import.meta.dirname, '../../src/mail'));
  });
});
