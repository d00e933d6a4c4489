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
import { getUser } from '../http/routes/admin-users.routes.js';
import { enable as enableModuleRoute } from '../http/routes/modules-hub.routes.js';
import { listWebhooks } from '../http/routes/webhooks.routes.js';
import type { AuthMode } from '../http/define-route.js';
import type { RouteLimit } from '../http/route-shape.js';
import { consoleRoles, withParams } from './module-pages.js';
import { perSession } from '../http/middleware/rate-limit-classes.js';
import { pageSession } from './page-auth.js';
import { accountFlowPages } from './pages/account-flows.js';
import { consolePages, type ConsoleHandler } from './pages/console.js';
import { devicePages } from './pages/device.js';
import { signInPages } from './pages/sign-in.js';
import { createWebView, type WebView } from './view.js';
import { retryAfterOf, tooManyMessage } from './too-many.js';
import { createWebPage, withReturn, type WebPage } from './web-page.js';

type PageHandler = (req: Request, res: Response) => Promise<unknown> | unknown;
type Route = Routes[number];

export interface WebLayer {
  /** Before the rate-limit gate: a refused page request is answered with the 429 page, not JSON. */
  front: RequestHandler;
  /** The pages and their assets; mounted before the API's 404. */
  router: express.Router;
  /** A browser asking for a page nobody serves gets the 404 page (an API client keeps the JSON 404). */
  notFound: RequestHandler;
  view: WebView;
  /**
   * Core's page routes with their rate-limit classes, as registered below (create-app.ts hands them to the
   * gate with the API routes; a module's pages reach the gate through the registry, registry-routes.ts).
   */
  limits: Routes;
}

/** Refusals and failures as pages: never a stack, the same statuses as the API. */
function pageErrors(w: WebPage): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    const { t } = w.view.lang(req);
    if (isAppError(err) && err.status === 429) {
      // A budget the handler counted (an e-mail change's password check in `login`): how long, and the way back.
      const wait = retryAfterOf(err.extra);
      res.setHeader('Retry-After', String(wait));
      return w.message(req, res, 429, tooManyMessage(t, req, w.app.config, wait));
    }
    if (isAppError(err) && err.status < 500) return w.message(req, res, err.status, { title: t('error.title'), text: err.message, tone: 'error' });
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

  const limits: Route[] = [];
  /** The urlencoded body, then `h`. */
  const withForms =
    (h: RequestHandler): RequestHandler =>
    (req, res, next) =>
      forms(req, res, (err?: unknown) => (err ? next(err) : h(req, res, next)));
  /** A GET page, run in the request's audit scope. */
  const getRun =
    (handler: PageHandler): RequestHandler =>
    (req, res, next) => {
      withAuditScope(requestAuditScope(req, null), () => Promise.resolve(handler(req, res))).catch(next);
    };
  /** A form post: urlencoded body, then the CSRF token (403 page without it), then the handler. */
  const postRun = (handler: PageHandler): RequestHandler =>
    withForms((req, res, next) => {
      if (!csrfValid(req, view.csrfKey) || !trustedFormOrigin(req, app.config)) {
        const { t } = view.lang(req);
        return w.message(req, res, 403, { title: t('error.csrf_title'), text: t('error.csrf'), tone: 'error' });
      }
      withAuditScope(requestAuditScope(req, null), () => Promise.resolve(handler(req, res))).catch(next);
    });
  /** A page route; a form post counts where its API twin counts (`limit`, for the gate), a page without one in `default`. */
  const get = (path: string, handler: PageHandler, limit?: RouteLimit) => {
    if (limit) limits.push({ method: 'get', path, auth: 'public', rateLimit: limit });
    router.get(path, getRun(handler));
  };
  const post = (path: string, handler: PageHandler, limit?: RouteLimit) => {
    if (limit) limits.push({ method: 'post', path, auth: 'public', rateLimit: limit });
    router.post(path, postRun(handler));
  };

  router.use(ASSET_PATH, view.assets.handler);
  // Browsers ask for /favicon.ico whatever a page links (a tab, a bookmark, a page that is not HTML): the same
  // icon, so no page load logs a 404.
  router.get('/favicon.ico', (_req, res) => res.redirect(301, view.assets.url('favicon.svg')));

  /**
   * A console page (issue 27): off with ADMIN_CONSOLE=false (the request goes on to the 404); the
   * session from the cookie, else the sign-in page; the role by the rule of the API route the page
   * mirrors (`{ roles }`), else the 403 page; a post also needs the token bound to the console's
   * SameSite=Strict cookie. The handler runs in an audit scope whose actor is the staff member.
   */
  const staffRun = (method: 'get' | 'post', handler: ConsoleHandler, mode: AuthMode = getUser.auth): RequestHandler => {
    const run: RequestHandler = (req, res, next) => {
      if (!app.config.adminConsole) return next();
      const { t } = view.lang(req);
      if (method === 'post' && (!csrfValid(req, view.csrfKey, 'console') || !trustedFormOrigin(req, app.config)))
        return w.message(req, res, 403, { title: t('error.csrf_title'), text: t('error.csrf'), tone: 'error' });
      (async () => {
        const s = await pageSession(app, req);
        if (!s || s.pending) return res.redirect(303, withReturn('/login', method === 'get' ? req.originalUrl : '/admin'));
        if (typeof mode !== 'object' || !mode.roles.includes(s.user.user_type as never))
          return w.message(req, res, 403, { title: t('console.forbidden_title'), text: t('console.forbidden') }, s.user);
        await withAuditScope(requestAuditScope(req, s.user), () => Promise.resolve(handler(req, res, s)));
      })().catch(next);
    };
    return method === 'get' ? run : withForms(run);
  };
  /** A console route; its posts count where the admin API's do (`admin`). */
  const staff = (method: 'get' | 'post', path: string, handler: ConsoleHandler, mode: AuthMode = getUser.auth) => {
    if (method === 'post') limits.push({ method, path, auth: 'session', rateLimit: 'admin' });
    router[method](path, staffRun(method, handler, mode));
  };
  const c = consolePages(w);
  const su = enableModuleRoute.auth;
  staff('get', '/admin', c.dashboard);
  staff('get', '/admin/users', c.users);
  staff('get', '/admin/users/:id', c.user);
  staff('post', '/admin/users/:id', c.saveProfile);
  staff('post', '/admin/users/:id/role', c.changeRole);
  staff('post', '/admin/users/:id/verify', c.verify);
  staff('post', '/admin/users/:id/disable', c.disable);
  staff('post', '/admin/users/:id/enable', c.enable);
  staff('post', '/admin/users/:id/reset-mail', c.resetMail);
  staff('post', '/admin/users/:id/sessions/revoke', c.revokeAll);
  staff('post', '/admin/users/:id/sessions/:sessionId/revoke', c.revoke);
  staff('post', '/admin/users/:id/social/:provider/remove', c.removeSocial);
  staff('get', '/admin/audit', c.audit);
  staff('get', '/admin/modules', c.modules);
  staff('post', '/admin/modules/:id/enable', c.enableModule, su);
  staff('post', '/admin/modules/:id/disable', c.disableModule, su);
  staff('get', '/admin/webhooks', c.webhooks, listWebhooks.auth);
  staff('post', '/admin/webhooks/deliveries/:id/retry', c.retryDelivery, listWebhooks.auth);

  const s = signInPages(w);
  const f = accountFlowPages(w);
  const a = accountPages(w);
  const d = devicePages(w);
  const pages: [typeof get, string, PageHandler, RouteLimit?][] = [
    [get, '/login', s.showLogin],
    [post, '/login', s.submitLogin, 'login'],
    [get, '/login/two-factor', s.showTwoFactor],
    [post, '/login/two-factor', s.submitTwoFactor],
    [post, '/login/two-factor/passkey', s.startPasskey],
    [post, '/logout', s.logout],
    [get, '/account', a.show],
    [post, '/account/profile', a.profile],
    [post, '/account/password', a.password, 'login'],
    // POST /auth/user/me/email's class (its password check counts in `login` as well), and the link's.
    [post, '/account/email', a.changeEmail, perSession('email-change')],
    // The verification link again: POST /auth/resend-verification's class.
    [post, '/account/email/resend', a.resendVerification, 'token-login'],
    [get, '/account/email/confirm', f.showEmailConfirm],
    [post, '/account/email/confirm', f.submitEmailConfirm, 'token-validate'],
    [post, '/account/sessions/revoke', a.revokeSession],
    [post, '/account/sessions/revoke-others', a.revokeOthers],
    [post, '/account/two-factor/add', a.addTwoFactor],
    [post, '/account/two-factor/confirm', a.confirmTwoFactor],
    [post, '/account/two-factor/cancel', a.cancelTwoFactor],
    [post, '/account/two-factor/remove', a.removeTwoFactor],
    [post, '/account/two-factor/backup-codes', a.backupCodes],
    [post, '/account/two-factor/forget-devices', a.forgetDevices],
    [post, '/account/social/unlink', a.unlink],
    [post, '/account/apps/revoke', a.revokeApp],
    [get, '/register', f.showRegister],
    [post, '/register', f.submitRegister, 'registration'],
    [get, '/forgot-password', f.showForgot],
    [post, '/forgot-password', f.submitForgot, 'token-login'],
    [get, '/reset-password', f.showReset, 'token-validate'],
    [post, '/reset-password', f.submitReset, 'token-validate'],
    [get, '/verify-email', f.showVerify],
    [get, '/device', d.show],
    // A device's user code typed on /device (RFC 8628 §5.1): per address here, per session in the handler.
    [post, '/device', d.submit, 'token-validate'],
    [post, '/verify-email', f.submitVerify, 'token-validate'],
  ];
  for (const [add, path, handler, limit] of pages) add(path, handler, limit);

  // What installed, switched-on modules bring (their manifests' `web` key), behind the same checks as core's
  // pages: a page's session and CSRF token, a console page's roles and console token, an account section's
  // or user panel's post as the account page's and the console user page's own posts.
  const mp = w.modules;
  router.use((req, res, next) => {
    const found = mp.find(req.method, req.path);
    if (!found) return next();
    withParams(req, found);
    const { mod } = found;
    switch (found.kind) {
      case 'page': {
        const { def } = found;
        const h: PageHandler = async (rq, rs) => {
          const s = await pageSession(app, rq);
          if (def.auth === 'session' && (!s || s.pending)) return rs.redirect(303, withReturn('/login', rq.method === 'GET' ? rq.originalUrl : null));
          await def.handler(mp.kit(rq, rs, s, mod));
        };
        return (def.method === 'get' ? getRun(h) : postRun(h))(req, res, next);
      }
      case 'console':
        return staffRun(found.def.method, (rq, rs, s) => found.def.handler(mp.kit(rq, rs, s, mod, { console: true })), consoleRoles(found.def))(req, res, next);
      case 'account':
        return postRun(a.moduleAction((rq, rs, s) => found.def.handler(mp.kit(rq, rs, s, mod)), found.section))(req, res, next);
      case 'user-panel':
        return staffRun(
          'post',
          c.moduleAct((rq, rs, s) => found.def.handler(mp.kit(rq, rs, s, mod, { console: true }))),
        )(req, res, next);
    }
  });

  router.use(pageErrors(w));

  const notFound: RequestHandler = (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || req.accepts(['json', 'html']) !== 'html') return next();
    const { t } = view.lang(req);
    w.message(req, res, 404, { title: t('error.not_found_title'), text: t('error.not_found'), tone: 'error' });
  };
  const pagePaths = new Set(pages.map(([, path]) => path));
  const front: RequestHandler = (req, res, next) => {
    if (pagePaths.has(req.path) || req.path === '/admin' || req.path.startsWith('/admin/') || mp.isPagePath(req.path)) {
      // The gate set Retry-After; the page says it in words and links back (src/web/too-many.ts).
      res.locals[TOO_MANY_PAGE] = (retryAfterSec: number) => {
        const { t } = view.lang(req);
        w.message(req, res, 429, tooManyMessage(t, req, app.config, retryAfterSec));
      };
    }
    next();
  };
  return { router, notFound, view, front, limits };
}
