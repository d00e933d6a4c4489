import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findPackageRoot } from './package-root.js';
import { renderTemplate, type TemplateVars } from './template-engine.js';

/** Every message Gatehouse sends; one folder entry per language under templates/emails/<lang>/. */
export const EMAIL_TEMPLATES = [
  'verify-email',
  'password-reset',
  'login-link',
  'test',
  // Security notices (src/audit/security-notices.ts): one per event that mails.
  'new-device-sign-in',
  'password-changed',
  'password-was-reset',
  'email-changed',
  'email-change-requested',
  'two-factor-disabled',
  'two-factor-reset',
  'social-linked',
  'social-unlinked',
  'passkey-added',
  'passkey-removed',
  // Self-service email change (src/services/email-change-service.ts): the link to the new address,
  // and what that address gets instead when it already belongs to an account.
  'email-change-confirm',
  'email-change-address-in-use',
  // Registration with a taken email under REGISTRATION_ENUMERATION_SAFE: the owner is told instead.
  'registration-address-in-use',
] as const;
export type EmailTemplateName = (typeof EMAIL_TEMPLATES)[number];

export const DEFAULT_EMAIL_LANG = 'en';
const DEFAULT_BRAND_COLOR = '#2f6fed';

export interface EmailBranding {
  productName: string;
  brandColor: string;
  /** Public base URL of Gatehouse. */
  publicUrl: string;
  /** Front-end URL shown in the footer; defaults to publicUrl. */
  appUrl?: string;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
  /** The language actually used (after fallback). */
  lang: string;
}

const NOTICE = { all: ['time', 'resetUrl'] };

/** Data a template cannot do without: sending a reset mail without its link is a bug, not a message. */
const REQUIRED: Record<EmailTemplateName, { all?: string[]; anyOf?: string[] }> = {
  'verify-email': { all: ['link'] },
  'password-reset': { all: ['link'] },
  'login-link': { anyOf: ['link', 'code'] },
  test: {},
  // A notice without its time or the way to take the account back is not a notice.
  'new-device-sign-in': NOTICE,
  'password-changed': NOTICE,
  'password-was-reset': NOTICE,
  'email-changed': NOTICE,
  'email-change-requested': { all: ['time', 'resetUrl', 'newEmail'] },
  'email-change-confirm': { all: ['link'] },
  'email-change-address-in-use': { all: ['resetUrl'] },
  'registration-address-in-use': { all: ['resetUrl'] },
  'two-factor-disabled': NOTICE,
  'two-factor-reset': NOTICE,
  'social-linked': NOTICE,
  'social-unlinked': NOTICE,
  'passkey-added': NOTICE,
  'passkey-removed': NOTICE,
};

interface LangStrings {
  subjects: Record<string, string>;
  layout: Record<string, string>;
}

let templatesDir: string | undefined;
const fileCache = new Map<string, string | null>();

/** Absolute path of templates/emails in the installed package. */
export function emailTemplatesDir(): string {
  templatesDir ??= path.join(findPackageRoot(), 'templates', 'emails');
  return templatesDir;
}

/**
 * Where a module's own messages live (modules/<id>/emails/<lang>/<name>.html|.txt and strings.json),
 * with the data each one needs; they share core's layout and branding.
 */
export interface TemplateSource {
  dir: string;
  required: Record<string, { all?: string[] }>;
}

// Templates ship with the package and never change while running, so each file is read once.
function readTemplateFile(...parts: string[]): string | null {
  return readFrom(emailTemplatesDir(), ...parts);
}

function readFrom(root: string, ...parts: string[]): string | null {
  const file = path.join(root, ...parts);
  if (!fileCache.has(file)) {
    try {
      fileCache.set(file, readFileSync(file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      fileCache.set(file, null);
    }
  }
  return fileCache.get(file) ?? null;
}

function loadStrings(lang: string, root = emailTemplatesDir()): LangStrings | null {
  const raw = readFrom(root, lang, 'strings.json');
  if (raw === null) return null;
  const parsed = JSON.parse(raw) as Partial<LangStrings>;
  return { subjects: parsed.subjects ?? {}, layout: parsed.layout ?? {} };
}

/** "es-MX" → "es"; anything that is not a plain language code (e.g. "../x") → null. */
function primaryLanguage(lang: string | null | undefined): string | null {
  const primary = String(lang ?? '')
    .trim()
    .toLowerCase()
    .split(/[-_]/)[0];
  return /^[a-z]{2,3}$/.test(primary) ? primary : null;
}

const PARTIAL_RE = /\{\{>\s*([a-z][a-z0-9-]*)\s*\}\}/g;

/**
 * Puts the shared pieces a message names (`{{> name}}` → `<lang>/_name.html|.txt` beside it) into its
 * text before any value is substituted: a piece is template text shipped with the package, never data.
 */
function withPartials(source: string, root: string, lang: string, ext: 'html' | 'txt'): string {
  return source.replace(PARTIAL_RE, (_m, name: string) => {
    const piece = readFrom(root, lang, `_${name}.${ext}`);
    if (piece === null) throw new Error(`Email partial "${name}" is missing from ${path.join(root, lang)}`);
    return piece.trimEnd();
  });
}

function loadTemplate(name: string, lang: string, source?: TemplateSource) {
  const root = source?.dir ?? emailTemplatesDir();
  const own = loadStrings(lang, root);
  // A module's strings.json holds its subjects; the layout strings are core's.
  const strings = source ? (own ? { subjects: own.subjects, layout: loadStrings(lang)?.layout ?? loadStrings(DEFAULT_EMAIL_LANG)?.layout ?? {} } : null) : own;
  const subject = strings?.subjects[name];
  const html = readFrom(root, lang, `${name}.html`);
  const text = readFrom(root, lang, `${name}.txt`);
  if (!strings || subject === undefined || html === null || text === null) return null;
  return { lang, strings, subject, html: withPartials(html, root, lang, 'html'), text: withPartials(text, root, lang, 'txt') };
}

const isTemplateName = (t: string): t is EmailTemplateName => (EMAIL_TEMPLATES as readonly string[]).includes(t);

function toVars(template: string, data: Record<string, unknown>): TemplateVars {
  const vars: TemplateVars = {};
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'object' || typeof value === 'function') {
      throw new Error(`Email template "${template}": data.${key} must be a string or number`);
    }
    // Control characters would let a user-chosen name forge lines in the plain-text part.
    vars[key] = String(value).replace(/[\u0000-\u001f\u007f]+/g, ' ');
  }
  return vars;
}

function checkData(template: string, vars: TemplateVars, required: { all?: string[]; anyOf?: string[] }): void {
  const { all = [], anyOf = [] } = required;
  const missing = all.filter((k) => !vars[k]);
  if (missing.length) throw new Error(`Email template "${template}" needs data: ${missing.join(', ')}`);
  if (anyOf.length && !anyOf.some((k) => vars[k])) {
    throw new Error(`Email template "${template}" needs at least one of: ${anyOf.join(', ')}`);
  }
  // Escaping does not make a javascript: href safe; links are built by the server, so this is a bug guard.
  if (vars.link && /^(javascript|data|vbscript):/i.test(vars.link.replace(/[\s\u0000-\u001f]+/g, ''))) {
    throw new Error(`Email template "${template}": link has a forbidden scheme`);
  }
}

/**
 * Renders one message in the user's language (primary subtag; falls back to English when the language
 * or that template is missing). Every value is HTML-escaped in the HTML part; only the layout's body
 * slot is inserted raw. Throws on an unknown template name or missing required data.
 */
export function renderEmail(
  template: string,
  lang: string | null | undefined,
  data: Record<string, unknown>,
  branding: EmailBranding,
  source?: TemplateSource,
): RenderedEmail {
  const known = source ? Object.keys(source.required) : EMAIL_TEMPLATES;
  if (source ? !Object.hasOwn(source.required, template) : !isTemplateName(template)) {
    throw new Error(`Unknown email template "${template}" (known: ${known.join(', ')})`);
  }
  const vars = toVars(template, data);
  checkData(template, vars, source ? source.required[template] : REQUIRED[template as EmailTemplateName]);

  const wanted = primaryLanguage(lang);
  const candidates = wanted && wanted !== DEFAULT_EMAIL_LANG ? [wanted, DEFAULT_EMAIL_LANG] : [DEFAULT_EMAIL_LANG];
  const found = candidates.map((l) => loadTemplate(template, l, source)).find((t) => t !== null);
  if (!found) throw new Error(`Email template "${template}" is missing from ${path.join(source?.dir ?? emailTemplatesDir(), DEFAULT_EMAIL_LANG)}`);

  const publicUrl = branding.publicUrl.replace(/\/+$/, '');
  // Branding comes last so message data can never restyle or re-label the mail.
  const all: TemplateVars = {
    ...vars,
    productName: branding.productName,
    brandColor: /^#[0-9a-fA-F]{6}$/.test(branding.brandColor) ? branding.brandColor : DEFAULT_BRAND_COLOR,
    publicUrl,
    appUrl: (branding.appUrl ?? publicUrl).replace(/\/+$/, ''),
    lang: found.lang,
  };
  const subject = renderTemplate(found.subject, all, { html: false }).replace(/\s+/g, ' ').trim();
  const layoutVars: TemplateVars = { ...all, subject };
  for (const [key, value] of Object.entries(found.strings.layout)) {
    layoutVars[key] = renderTemplate(value, all, { html: false });
  }

  const layoutHtml = readTemplateFile('layout.html');
  const layoutText = readTemplateFile('layout.txt');
  if (layoutHtml === null || layoutText === null) throw new Error(`Email layout is missing from ${emailTemplatesDir()}`);

  const html = renderTemplate(layoutHtml, { ...layoutVars, body: renderTemplate(found.html, all, { html: true }) }, { html: true, raw: ['body'] });
  const text = renderTemplate(layoutText, { ...layoutVars, body: renderTemplate(found.text, all, { html: false }).trim() }, { html: false, raw: ['body'] });
  return { subject, html, text, lang: found.lang };
}
