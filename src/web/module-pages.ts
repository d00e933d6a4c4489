import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';
import { Eta } from 'eta';
import { match } from 'path-to-regexp';
import type { AppContext } from '../app-context.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { findPackageRoot } from '../mail/package-root.js';
import type { UserType } from '../http/route-shape.js';
import type { ModuleConsolePage, ModulePageKit, ModuleSectionPost, ModuleWeb, ModuleWebPage } from '../modules/module-web.js';
import { callModuleRoute } from './module-routes.js';
import { clearPageSessionCookie, type PageSession } from './page-auth.js';
import { WEB_LANGS, type WebLang } from './i18n.js';
import type { WebView } from './view.js';
import type { WebPage } from './web-page.js';

/**
 * What installed, switched-on modules bring to the pages through their manifest's `web` key
 * (modules/module-web.ts, issue 61): their pages, console pages and navigation entries, account-page
 * sections and console user-page panels, each rendered from the module's own templates and strings.
 * Core names no module here: it reads what the registry's manifests declare, and serves a module's
 * contribution only while that module is installed and on (otherwise its paths answer the 404 page).
 */

const ADMIN_ROLES: readonly UserType[] = ['admin', 'superadmin'];

interface LoadedWeb {
  id: string;
  web: ModuleWeb;
  eta: Eta;
}

/** A module page found for a request: what kind, which module, its declaration and the path's parameters. */
export type FoundModulePage =
  | { kind: 'page'; mod: LoadedWeb; def: ModuleWebPage; params: Record<string, string> }
  | { kind: 'console'; mod: LoadedWeb; def: ModuleConsolePage; params: Record<string, string> }
  | { kind: 'account'; mod: LoadedWeb; def: ModuleSectionPost; section: string; params: Record<string, string> }
  | { kind: 'user-panel'; mod: LoadedWeb; def: ModuleSectionPost; params: Record<string, string> };

/** A module's section or panel as core's page template inserts it: its anchor, title key, order and HTML. */
export interface RenderedPart {
  id: string;
  title?: string;
  order: number;
  render(it: Record<string, unknown>): string;
}

export interface ModulePages {
  /** The module page an installed, switched-on module serves at `METHOD path`; null when none does. */
  find(method: string, path: string): FoundModulePage | null;
  /** Whether any module of the registry (installed or not) declares a page at `path`: its 429 is a page. */
  isPagePath(path: string): boolean;
  /** The page toolkit a module's handler gets. */
  kit(req: Request, res: Response, s: PageSession | null, mod: LoadedWeb, opts?: { console?: boolean }): ModulePageKit;
  /** The account page's module sections to show, in order (each module's `load`; null ones left out). */
  accountSections(req: Request, res: Response, s: PageSession): Promise<RenderedPart[]>;
  /** The console user page's module panels, in order. */
  userPanels(req: Request, res: Response, s: PageSession, target: { user: UserRecord; manage: boolean }): Promise<RenderedPart[]>;
  /** What the console's layout reads: the staff member's role and the navigation's module entries. */
  consoleData(req: Request, user: UserRecord): Record<string, unknown>;
  /**
   * The text of an outcome a module's post named (`?done=<x>`): the string `<id>.done.<x>` (on the console
   * `<id>.console.done.<x>`) of an installed, switched-on module; null when none has it.
   */
  outcome(key: string, t: (k: string) => string, place?: 'account' | 'console'): string | null;
}

const matchers = new Map<string, ReturnType<typeof match>>();
function params(pattern: string, p: string): Record<string, string> | null {
  let m = matchers.get(pattern);
  if (!m) {
    m = match(pattern, { decode: decodeURIComponent });
    matchers.set(pattern, m);
  }
  const r = m(p);
  if (!r) return null;
  return Object.fromEntries(Object.entries(r.params).map(([k, v]) => [k, Array.isArray(v) ? v.join('/') : String(v)]));
}

/** The module's strings: `<dir>/i18n/<lang>.json`, every key starting `<id>.` (so no module overwrites another's or core's). */
function moduleStrings(id: string, dir: string): Partial<Record<WebLang, Record<string, string>>> {
  const out: Partial<Record<WebLang, Record<string, string>>> = {};
  for (const lang of WEB_LANGS) {
    const file = path.join(dir, 'i18n', `${lang}.json`);
    if (!existsSync(file)) continue;
    const strings = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
    for (const k of Object.keys(strings)) if (!k.startsWith(`${id}.`)) throw new Error(`module ${id}: web string ${k} must start with ${id}.`);
    out[lang] = strings;
  }
  return out;
}

export function createModulePages(app: AppContext, view: WebView, w: Pick<WebPage, 'message'>): ModulePages {
  const registry = () => app.modules.registry?.() ?? [];
  const loaded = new Map<object, LoadedWeb>();
  /** A manifest's web key, its templates and strings loaded once. */
  const load = (m: { id: string; web?: ModuleWeb }): LoadedWeb | null => {
    if (!m.web) return null;
    const known = loaded.get(m.web);
    if (known) return known;
    const dir = m.web.dir ?? path.join(findPackageRoot(), 'modules', m.id, 'web');
    view.addStrings(moduleStrings(m.id, dir));
    const l = { id: m.id, web: m.web, eta: new Eta({ views: dir, cache: true, autoEscape: true, autoTrim: [false, 'nl'] }) };
    loaded.set(m.web, l);
    return l;
  };
  for (const m of registry()) load(m);

  /** The modules whose pages are served now: installed and switched on. */
  const enabled = (): LoadedWeb[] =>
    (app.modules.routes()?.installed ?? []).flatMap((m) => (m.enabled && m.manifest.web ? [load(m.manifest)].filter((x) => x !== null) : []));

  const find = (method: string, p: string): FoundModulePage | null => {
    const verb = method === 'HEAD' ? 'get' : method.toLowerCase();
    for (const mod of enabled()) {
      const { web } = mod;
      for (const def of web.pages ?? []) {
        const ps = def.method === verb && params(def.path, p);
        if (ps) return { kind: 'page', mod, def, params: ps };
      }
      for (const def of web.console ?? []) {
        const ps = def.method === verb && params(def.path, p);
        if (ps) return { kind: 'console', mod, def, params: ps };
      }
      if (verb !== 'post') continue;
      for (const section of web.account ?? [])
        for (const def of section.posts ?? []) {
          const ps = params(def.path, p);
          if (ps) return { kind: 'account', mod, def, section: section.id, params: ps };
        }
      for (const panel of web.userPanels ?? [])
        for (const def of panel.posts ?? []) {
          const ps = params(def.path, p);
          if (ps) return { kind: 'user-panel', mod, def, params: ps };
        }
    }
    return null;
  };

  const isPagePath = (p: string) =>
    registry().some((m) => m.web && [...(m.web.pages ?? []), ...(m.web.account ?? []).flatMap((s) => s.posts ?? [])].some((d) => params(d.path, p) !== null));

  const consoleData = (req: Request, user: UserRecord) => {
    const nav = enabled().flatMap((mod) =>
      (mod.web.nav ?? []).filter((n) => (n.roles ?? ADMIN_ROLES).some((r) => r === user.user_type)).map((n) => [n.path, n.label]),
    );
    return { staff: { super: user.user_type === 'superadmin', nav }, path: req.path };
  };

  const kit = (req: Request, res: Response, s: PageSession | null, mod: LoadedWeb, opts: { console?: boolean } = {}): ModulePageKit => {
    const user = s?.user ?? null;
    const { t } = view.lang(req, user);
    return {
      req,
      res,
      params: Object.fromEntries(Object.entries(req.params ?? {}).map(([k, v]) => [k, String(v)])),
      session: s && !s.pending ? { user: s.user, session: s.session } : null,
      t,
      field: (name, max = 200) => {
        const v = (req.body as Record<string, unknown> | undefined)?.[name];
        return typeof v === 'string' ? v.slice(0, max) : '';
      },
      render(template, data = {}, o = {}) {
        const extra = opts.console && user ? consoleData(req, user) : {};
        view.renderBody(
          req,
          res,
          (it) => mod.eta.render(template, it),
          { title: o.title ?? '', ...extra, ...data },
          {
            status: o.status,
            user,
            csrf: opts.console ? 'console' : undefined,
          },
        );
      },
      message: (status, m) => w.message(req, res, status, m, user),
      callRoute: async (method, p, input) => {
        if (!s) throw new Error('callRoute needs a signed-in session');
        return callModuleRoute(app, req, res, s, method, p, input);
      },
      signOut: () => clearPageSessionCookie(res, app.config),
    };
  };

  /** A part's HTML: its template with the page's `it` (t, csrf, when) and the part's own data. */
  const part = (mod: LoadedWeb, template: string, data: Record<string, unknown>) => (it: Record<string, unknown>) =>
    mod.eta.render(template, { ...it, ...data });

  const accountSections = async (req: Request, res: Response, s: PageSession): Promise<RenderedPart[]> => {
    const out: RenderedPart[] = [];
    for (const mod of enabled())
      for (const sec of mod.web.account ?? []) {
        const data = await sec.load(kit(req, res, s, mod));
        if (data) out.push({ id: sec.id, title: sec.title, order: sec.order, render: part(mod, sec.template, data) });
      }
    return out.sort((a, b) => a.order - b.order);
  };

  const userPanels = async (req: Request, res: Response, s: PageSession, target: { user: UserRecord; manage: boolean }): Promise<RenderedPart[]> => {
    const out: RenderedPart[] = [];
    for (const mod of enabled())
      for (const panel of mod.web.userPanels ?? []) {
        const data = await panel.load(kit(req, res, s, mod, { console: true }), target);
        if (data) out.push({ id: panel.id, order: panel.order, render: part(mod, panel.template, data) });
      }
    return out.sort((a, b) => a.order - b.order);
  };

  const outcome = (key: string, t: (k: string) => string, place: 'account' | 'console' = 'account'): string | null => {
    if (!/^[a-z0-9_]{1,64}$/.test(key)) return null;
    for (const m of enabled()) {
      try {
        return t(place === 'console' ? `${m.id}.console.done.${key}` : `${m.id}.done.${key}`);
      } catch {
        // not this module's
      }
    }
    return null;
  };

  return { find, isPagePath, kit, accountSections, userPanels, consoleData, outcome };
}

/** The roles a module's console page admits (admin and superadmin unless it says). */
export const consoleRoles = (def: { roles?: readonly UserType[] }): { roles: readonly UserType[] } => ({ roles: def.roles ?? ADMIN_ROLES });

/** Sets the path's parameters of a module page found for this request (the wrappers in web-router.ts run it). */
export function withParams(req: Request, found: FoundModulePage): void {
  // The dispatcher matched the path itself (Express saw a `use`), so the parameters are set here.
  Object.defineProperty(req, 'params', { value: found.params, writable: true, configurable: true, enumerable: true });
}
