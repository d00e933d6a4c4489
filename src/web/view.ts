import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';
import { Eta } from 'eta';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { findPackageRoot } from '../mail/package-root.js';
import { loadAssets, type AssetTable } from './assets.js';
import { loadStrings, pickLang, translator, WEB_LANGS, type Translate, type WebLang } from './i18n.js';
import { csrfKey, csrfTokenFor, CSRF_FIELD, newNonce, pageCsp, type CsrfKind } from './page-security.js';

type ViewConfig = Pick<Config, 'publicBaseUrl' | 'socialRedirectAllowlist' | 'cookieSecret' | 'bridgeSecret' | 'productName' | 'brandColor' | 'webLogoFile'>;

/** Everything the pages share, built once: templates, strings, hashed assets, the CSRF key. */
export interface WebView {
  config: ViewConfig;
  assets: AssetTable;
  /** Renders a page of templates/web/pages in the layout, with this response's nonce and CSRF token. */
  render(req: Request, res: Response, page: string, data?: Record<string, unknown>, opts?: RenderOptions): void;
  /** The language and translator for a request (for messages built outside a template). */
  lang(req: Request, user?: PageUser | null): { lang: WebLang; t: Translate };
  csrfKey: Buffer;
  /** The strings of a language. */
  translator(lang: WebLang): Translate;
  /** Adds strings (a module's: src/web/module-pages.ts); a key that is there already is refused. */
  addStrings(more: Partial<Record<WebLang, Record<string, string>>>): void;
  /**
   * Renders a body made elsewhere (a module's template) in the layout: `body` gets everything a page of
   * templates/web/pages gets (`t`, `csrf`, `when`, ...) with `data`, and answers its HTML.
   */
  renderBody(req: Request, res: Response, body: (it: Record<string, unknown>) => string, data?: Record<string, unknown>, opts?: RenderOptions): void;
  /**
   * A page of templates/web/pages in the layout as a string, for a response that is not Express's (the OpenID
   * provider's pages): no user in the header, no CSRF cookie (such a page's form carries its own token).
   * The caller sends `csp` as the page's Content-Security-Policy.
   */
  document(page: string, data: Record<string, unknown>, opts: { lang: WebLang; formTargets?: string[] }): { html: string; csp: string };
}

export interface RenderOptions {
  status?: number;
  user?: PageUser | null;
  /** The console's pages: their forms' tokens are bound to the console's Strict cookie. */
  csrf?: CsrfKind;
  /** Further origins the page's forms may end at (an OpenID client's, after a sign-in for it). */
  formTargets?: string[];
}

/** What the layout shows of a signed-in user. */
export interface PageUser {
  name: string | null;
  email: string;
  lang?: string | null;
}

const LOGO_TYPES: Record<string, string> = { '.svg': 'logo.svg', '.png': 'logo.png', '.webp': 'logo.webp', '.jpg': 'logo.jpg', '.jpeg': 'logo.jpg' };

/** The operator's logo (WEB_LOGO_FILE) as an extra asset; a missing or unknown file is logged and left out. */
function logoAsset(config: ViewConfig, logger: Logger): { name: string; body: Buffer }[] {
  const file = config.webLogoFile;
  if (!file) return [];
  const name = LOGO_TYPES[path.extname(file).toLowerCase()];
  if (!name || !existsSync(file)) {
    logger.warn({ file }, 'WEB_LOGO_FILE is not a readable .svg, .png, .webp or .jpg file; the pages show no logo');
    return [];
  }
  return [{ name, body: readFileSync(file) }];
}

export function createWebView(config: ViewConfig, logger: Logger, root = path.join(findPackageRoot(import.meta.url), 'templates', 'web')): WebView {
  // autoEscape: every <%= %> is HTML-escaped; raw output (<%~ %>) is kept for the layout's body slot.
  const eta = new Eta({ views: root, cache: true, autoEscape: true, autoTrim: [false, 'nl'] });
  const extra = logoAsset(config, logger);
  const assets = loadAssets(path.join(root, 'assets'), extra);
  const logoUrl = extra.length ? assets.url(extra[0].name) : null;
  const strings = loadStrings(path.join(root, 'i18n'));
  const key = csrfKey(config);

  const lang = (req: Request, user?: PageUser | null) => {
    const l = pickLang(user?.lang, req.headers['accept-language']);
    return { lang: l, t: translator(strings, l) };
  };

  /** The page's data with what the layout reads (product, colour, logo, assets, the time helper). */
  const full = (data: Record<string, unknown>, layout: Record<string, unknown>) => ({
    ...data,
    ...layout,
    product: config.productName,
    brandColor: config.brandColor,
    logoUrl,
    asset: (name: string) => assets.url(name),
    when: timeElement,
  });
  const html0 = (page: string, data: Record<string, unknown>, layout: Record<string, unknown>) => eta.render(`pages/${page}`, full(data, layout));

  /** The layout's data for a response: this response's nonce and CSRF token, the language, the user. */
  const layoutOf = (req: Request, res: Response, opts: RenderOptions) => {
    const nonce = newNonce();
    const { lang: l, t } = lang(req, opts.user);
    return {
      nonce,
      lang: l,
      data: {
        t,
        lang: l,
        nonce,
        csrf: { field: CSRF_FIELD, token: csrfTokenFor(req, res, key, config, opts.csrf) },
        // The layout's sign-out form posts to a hosted page: its token is always the pages' one.
        pageCsrf: { field: CSRF_FIELD, token: opts.csrf === 'console' ? csrfTokenFor(req, res, key, config) : null },
        console: opts.csrf === 'console',
        user: opts.user ?? null,
      },
    };
  };
  const send = (res: Response, html: string, l: WebLang, nonce: string, opts: RenderOptions) => {
    res.status(opts.status ?? 200);
    res.setHeader('Content-Security-Policy', pageCsp(nonce, config, opts.formTargets));
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Language', l);
    res.type('text/html; charset=utf-8').send(html);
  };

  return {
    config,
    assets,
    csrfKey: key,
    lang,
    render(req, res, page, data = {}, opts = {}) {
      const { nonce, lang: l, data: layout } = layoutOf(req, res, opts);
      send(res, html0(page, data, layout), l, nonce, opts);
    },
    renderBody(req, res, body, data = {}, opts = {}) {
      const { nonce, lang: l, data: layout } = layoutOf(req, res, opts);
      const it = full(data, layout);
      send(res, eta.render('layout', { ...it, body: body(it) }), l, nonce, opts);
    },
    translator: (l) => translator(strings, l),
    addStrings(more) {
      for (const l of WEB_LANGS) {
        for (const [k, v] of Object.entries(more[l] ?? {})) {
          if (k in strings[l] && strings[l][k] !== v) throw new Error(`web string ${k} is defined twice`);
          strings[l][k] = v;
        }
      }
    },
    document(page, data, opts) {
      const nonce = newNonce();
      const t = translator(strings, opts.lang);
      const none = { field: CSRF_FIELD, token: null };
      const html = html0(page, data, { t, lang: opts.lang, nonce, csrf: none, pageCsrf: none, console: false, user: null });
      return { html, csp: pageCsp(nonce, config, opts.formTargets) };
    },
  };
}

/**
 * A moment on a page: `<time>` with the ISO value as its machine value and title, shown as UTC minutes until
 * web.js writes it in the viewer's own locale and time zone (the page works without script).
 */
export function timeElement(at: Date | string | null | undefined): string {
  if (!at) return '—';
  const d = at instanceof Date ? at : new Date(at);
  if (Number.isNaN(d.getTime())) return '—';
  const iso = d.toISOString();
  return `<time datetime="${iso}" title="${iso}" data-local>${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}
