import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import type { AppContext } from '../app-context.js';
import { withAuditScope } from '../audit/audit-scope.js';
import { isAppError } from '../errors/app-error.js';
import type { Routes } from '../http/registry-routes.js';
import { requestAuditScope } from '../http/request-audit.js';
import { TOO_MANY_PAGE } from '../http/middleware/rate-limit-request.js';
import { ASSET_PATH } from './assets.js';
import { csrfValid, trustedFormOrigin } from './page-security.js';
import { accountPages } from './pages/account.js';
import { accountFlowPages } from './pages/account-flows.js';
import { signInPages } from './pages/sign-in.js';
import { createWebView, type WebView } from './view.js';
import { createWebPage, type WebPage } from './web-page.js';

type PageHandler = (req: Request, res: Response) => Promise<unknown> | unknown;

/**
 * The page routes' rate-limit classes, for the gate (create-app.ts hands them to it with the core
 * routes): a form post counts where its API twin counts; a GET page in `default`.
 */
export const WEB_ROUTE_LIMITS: Routes = [
  { method: 'post', path: '/login', auth: 'public', rateLimit: 'login' },
  { method: 'post', path: '/register', auth: 'public', rateLimit: 'registration' },
  { method: 'post', path: '/forgot-password', auth: 'public', rateLimit: 'token-login' },
  { method: 'post', path: '/reset-password', auth: 'public', rateLimit: 'token-validate' },
  { method: 'post', path: '/verify-email', auth: 'public', rateLimit: 'token-validate' },
  { method: 'get', path: '/reset-password', auth: 'public', rateLimit: 'token-validate' },
  { method: 'post', path: '/account/password', auth: 'session', rateLimit: 'login' },
];

export interface WebLayer {
  /** Before the rate-limit gate: a refused page request is answered with the 429 page, not JSON. */
  front: RequestHandler;
  /** The pages and their assets; mounted before the API's 404. */
  router: express.Router;
  /** A browser asking for a page nobody serves gets the 404 page (an API client keeps the JSON 404). */
  notFound: RequestHandler;
  view: WebView;
}

/** Refusals and failures as pages: never a stack, the same statuses as the API. */
function pageErrors(w: WebPage): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    const { t } = w.view.lang(req);
    if (isAppError(err) && err.status < 500) {
      const text = err.status === 429 ? t('error.rate_limited') : err.message;
      return w.message(req, res, err.status, { title: t('error.title'), text, tone: 'error' });
    }
    if (isAppError(err) && err.status === 503)
      return w.message(req, res, 503, { title: t('error.disabled_title'), text: t('error.unavailable'), tone: 'error' });
    w.app.logger.error({ err, path: req.path }, 'web page failed');
    w.message(req, res, 500, { title: t('error.title'), text: t('error.text'), tone: 'error' });
  };
}

export function createWebLayer(app: AppContext, view: WebView = createWebView(app.config, app.logger)): WebLayer {
  const w = createWebPage(app, view);
  const router = express.Router({ strict: false });
  const forms = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });

  /** A GET page, run in the request's audit scope. */
  const get = (path: string, handler: PageHandler) =>
    router.get(path, (req, res, next) => {
      withAuditScope(requestAuditScope(req, null), () => Promise.resolve(handler(req, res))).catch(next);
    });
  /** A form post: urlencoded body, then the CSRF token (403 page without it), then the handler. */
  const post = (path: string, handler: PageHandler) =>
    router.post(path, forms, (req, res, next) => {
      if (!csrfValid(req, view.csrfKey) || !trustedFormOrigin(req, app.config)) {
        const { t } = view.lang(req);
        return w.message(req, res, 403, { title: t('error.csrf_title'), text: t('error.csrf'), tone: 'error' });
      }
      withAuditScope(requestAuditScope(req, null), () => Promise.resolve(handler(req, res))).catch(next);
    });

  router.use(ASSET_PATH, view.assets.handler);

  const s = signInPages(w);
  const f = accountFlowPages(w);
  const a = accountPages(w);
  const pages: [typeof get, string, PageHandler][] = [
    [get, '/login', s.showLogin],
    [post, '/login', s.submitLogin],
    [get, '/login/two-factor', s.showTwoFactor],
    [post, '/login/two-factor', s.submitTwoFactor],
    [post, '/logout', s.logout],
    [get, '/account', a.show],
    [post, '/account/profile', a.profile],
    [post, '/account/password', a.password],
    [post, '/account/sessions/revoke', a.revokeSession],
    [post, '/account/sessions/revoke-others', a.revokeOthers],
    [post, '/account/two-factor/add', a.addTwoFactor],
    [post, '/account/two-factor/confirm', a.confirmTwoFactor],
    [post, '/account/two-factor/remove', a.removeTwoFactor],
    [post, '/account/two-factor/backup-codes', a.backupCodes],
    [post, '/account/two-factor/forget-devices', a.forgetDevices],
    [post, '/account/passkeys/rename', a.renamePasskey],
    [post, '/account/passkeys/remove', a.removePasskey],
    [post, '/account/social/unlink', a.unlink],
    [post, '/account/privacy/delete', a.deleteAccount],
    [get, '/register', f.showRegister],
    [post, '/register', f.submitRegister],
    [get, '/forgot-password', f.showForgot],
    [post, '/forgot-password', f.submitForgot],
    [get, '/reset-password', f.showReset],
    [post, '/reset-password', f.submitReset],
    [get, '/verify-email', f.showVerify],
    [post, '/verify-email', f.submitVerify],
  ];
  for (const [add, path, handler] of pages) add(path, handler);

  router.use(pageErrors(w));

  const notFound: RequestHandler = (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || req.accepts(['json', 'html']) !== 'html') return next();
    const { t } = view.lang(req);
    w.message(req, res, 404, { title: t('error.not_found_title'), text: t('error.not_found'), tone: 'error' });
  };
  const pagePaths = new Set(pages.map(([, path]) => path));
  const front: RequestHandler = (req, res, next) => {
    if (pagePaths.has(req.path)) {
      res.locals[TOO_MANY_PAGE] = () => {
        const { t } = view.lang(req);
        w.message(req, res, 429, { title: t('error.title'), text: t('error.rate_limited'), tone: 'error' });
      };
    }
    next();
  };
  return { router, notFound, view, front };
}
