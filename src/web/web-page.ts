import type { Request, Response } from 'express';
import type { AppContext } from '../app-context.js';
import { createModulePages, type ModulePages } from './module-pages.js';
import { checkReturnTo } from './page-security.js';
import type { PageUser, WebView } from './view.js';

/** What every page handler is given: the app (its services), the view, and the shared page helpers. */
export interface WebPage {
  app: AppContext;
  view: WebView;
  /** What installed, switched-on modules bring to the pages (their manifests' `web` key). */
  modules: ModulePages;
  /**
   * The request's checked `return_to` (query or form field): `{ to }` (null when absent), or null after
   * answering 400 with the "not allowed" page — the caller just returns.
   */
  returnTo(req: Request): { to: string | null } | null;
  /** A page with one message (confirmations, refusals, errors), in the layout. */
  message(
    req: Request,
    res: Response,
    status: number,
    m: { title: string; text: string; tone?: 'error' | 'note'; link?: { href: string; label: string } },
    user?: PageUser | null,
  ): void;
}

export function createWebPage(app: AppContext, view: WebView): WebPage {
  const message: WebPage['message'] = (req, res, status, m, user) =>
    view.render(req, res, 'message', { title: m.title, text: m.text, tone: m.tone ?? 'note', link: m.link ?? null }, { status, user });
  const page: WebPage = {
    app,
    view,
    modules: createModulePages(app, view, { message }),
    returnTo(req) {
      const raw = req.method === 'POST' ? (req.body as Record<string, unknown> | undefined)?.return_to : req.query.return_to;
      const r = checkReturnTo(raw, app.config);
      if (r.ok) return { to: r.to };
      const { t } = view.lang(req);
      page.message(req, req.res as Response, 400, {
        title: t('error.return_to_title'),
        text: t('error.return_to'),
        tone: 'error',
        link: { href: '/login', label: t('error.go_sign_in') },
      });
      return null;
    },
    message,
  };
  return page;
}

/** A form field as a string of at most `max` characters ('' when absent or not a string). */
export function bodyString(req: Request, name: string, max: number): string {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v.slice(0, max) : '';
}

/** Where a completed sign-in goes: the checked return_to, else the account page. */
export const destination = (rt: { to: string | null }): string => rt.to ?? '/account';

/** `path` with `?return_to=` when there is one. */
export const withReturn = (path: string, to: string | null): string => (to ? `${path}?return_to=${encodeURIComponent(to)}` : path);
