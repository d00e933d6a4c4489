import type { Request, Response } from 'express';
import type { AppContext } from '../../app-context.js';
import { isAppError } from '../../errors/app-error.js';
import { passwordLogin } from '../../http/routes/auth.routes.js';
import { enabledModuleRoute, runModuleRoute } from '../module-routes.js';
import { clearPageSessionCookie, pageSession, setPageSessionCookie } from '../page-auth.js';
import type { WebPage } from '../web-page.js';
import { bodyString, destination, withReturn } from '../web-page.js';
import { rotateCsrfBinding } from '../page-security.js';
import { retryAfterOf, waitText } from '../too-many.js';

/** The passkeys module's API the page's script uses (present only when that module is on). */
const PASSKEY_OPTIONS = '/auth/passkeys/login/options';
/** The second-factor provider's verify route, which the two-factor page calls in-process. */
const TWO_FACTOR_VERIFY = '/auth/two_factor/verify';
/** …and its "send me a code" route (email and SMS methods). */
const TWO_FACTOR_START = '/auth/two_factor/:method/start';

const NOTICES: Record<string, string> = { reset: 'login.reset_done', verified: 'login.verified', registered: 'login.registered_verify' };

/** The configured social providers' buttons; each goes back to the page's destination when the allow-list lets it. */
function socialButtons(app: AppContext, next: string): { name: string; href: string }[] {
  if (!app.config.socialLogin) return [];
  const absolute = new URL(next, app.config.publicBaseUrl).toString();
  let returnTo: string | null = null;
  try {
    returnTo = app.services.social.checkReturnTo(absolute);
  } catch {
    returnTo = null; // the allow-list does not name this server: the callback lands on FRONTEND_URL/login
  }
  return app.services.social.providers().map((p) => ({
    name: p.name,
    href: returnTo ? `${p.login_url}?return_to=${encodeURIComponent(returnTo)}` : p.login_url,
  }));
}

/** A sign-in for an OpenID client (return_to is its waiting interaction): the client's origin, where the form's redirects end. */
async function oidcFormTargets(app: AppContext, to: string | null): Promise<string[]> {
  const uid = /^\/oidc\/interaction\/([\w-]{1,64})$/.exec(to ?? '')?.[1];
  const origin = uid ? await app.services.oidc.interactionRedirectOrigin(uid) : null;
  return origin ? [origin] : [];
}

async function renderLogin(w: WebPage, req: Request, res: Response, extra: { error?: string; email?: string; status?: number } = {}) {
  const { app } = w;
  const rt = w.returnTo(req);
  if (!rt) return;
  const next = destination(rt);
  const { t } = w.view.lang(req);
  const notice = typeof req.query.done === 'string' && NOTICES[req.query.done] ? t(NOTICES[req.query.done]) : null;
  w.view.render(
    req,
    res,
    'login',
    {
      title: t('login.submit'),
      error: extra.error,
      email: extra.email,
      notice,
      returnTo: rt.to,
      returnQuery: withReturn('', rt.to),
      next,
      twoFactorUrl: withReturn('/login/two-factor', rt.to),
      passkeys: enabledModuleRoute(app, 'post', PASSKEY_OPTIONS) !== null,
      providers: socialButtons(app, next),
      registration: app.config.registrationEnabled && !app.config.registrationRequiresBridgeSecret,
    },
    { status: extra.status, formTargets: await oidcFormTargets(app, rt.to) },
  );
}

export function signInPages(w: WebPage) {
  const { app } = w;

  /** GET /login: a signed-in browser goes straight on; a pending one to the second step. */
  const showLogin = async (req: Request, res: Response) => {
    const rt = w.returnTo(req);
    if (!rt) return;
    const s = await pageSession(app, req);
    // reauth=1: an OpenID client asked for a fresh sign-in (prompt=login, max_age): the form, even with a session
    // (going straight on would send the browser back to the provider, which sends it here again).
    const reauth = req.query.reauth === '1';
    if (s && !s.pending && !reauth) return res.redirect(303, destination(rt));
    if (s?.pending) return res.redirect(303, withReturn('/login/two-factor', rt.to));
    await renderLogin(w, req, res);
  };

  /** POST /login: the same sign-in as POST /auth/login (passwordLogin), its `login` class counted by the gate. */
  const submitLogin = async (req: Request, res: Response) => {
    const rt = w.returnTo(req);
    if (!rt) return;
    const { t } = w.view.lang(req);
    const identifier = bodyString(req, 'email', 254).trim();
    const password = bodyString(req, 'password', 1024);
    if (!identifier || !password) return renderLogin(w, req, res, { error: t('login.failed'), email: identifier, status: 400 });
    let r;
    try {
      r = await passwordLogin(app, req, res, identifier, password);
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err;
      // A per-account budget or the backoff: the form again, saying how long to wait (Retry-After is set).
      const error =
        err.status === 401
          ? t('login.failed')
          : err.status === 429
            ? t('error.rate_limited_wait', { wait: waitText(t, retryAfterOf(err.extra)) })
            : err.message;
      return renderLogin(w, req, res, { error, email: identifier, status: err.status });
    }
    setPageSessionCookie(res, app.config, r.token, new Date(r.session.expires_at));
    res.redirect(303, r.status === 'pending' ? withReturn('/login/two-factor', rt.to) : destination(rt));
  };

  /** GET /login/two-factor: the pending session (its cookie) and every method the installed provider offers. */
  const showTwoFactor = async (req: Request, res: Response, outcome: { error?: string; sent?: boolean; methodId?: string } = {}) => {
    const rt = w.returnTo(req);
    if (!rt) return;
    const s = await pageSession(app, req);
    if (!s) return res.redirect(303, withReturn('/login', rt.to));
    if (!s.pending) return res.redirect(303, destination(rt));
    const all = (await app.services.signIn.pendingMethods(s.user)) as { id: string; method: string; identifier?: string | null }[];
    // A passkey is its own form: the WebAuthn ceremony (web.js) fills in the credential, the code field is for the others.
    const methods = all.filter((m) => m.method !== 'passkey');
    const passkey = enabledModuleRoute(app, 'post', TWO_FACTOR_START) ? (all.find((m) => m.method === 'passkey') ?? null) : null;
    const { t } = w.view.lang(req, s.user);
    if ((!methods.length && !passkey) || !enabledModuleRoute(app, 'post', TWO_FACTOR_VERIFY))
      return w.message(req, res, 503, { title: t('error.disabled_title'), text: t('error.unavailable'), tone: 'error' });
    w.view.render(
      req,
      res,
      'second-factor',
      {
        title: t('two_factor.title'),
        methods,
        passkey,
        returnTo: rt.to,
        error: outcome.error,
        sent: outcome.sent,
        chosen: outcome.methodId ?? methods[0]?.id,
      },
      { status: outcome.error ? 400 : 200, formTargets: await oidcFormTargets(app, rt.to) },
    );
  };

  /**
   * POST /login/two-factor: the provider's own API handlers, called in process with this pending
   * session (its rate limit counted as the API counts it): "send me a code" runs
   * `POST /auth/two_factor/:method/start`, the code runs `POST /auth/two_factor/verify`.
   */
  const submitTwoFactor = async (req: Request, res: Response) => {
    const rt = w.returnTo(req);
    if (!rt) return;
    const s = await pageSession(app, req);
    if (!s) return res.redirect(303, withReturn('/login', rt.to));
    if (!s.pending) return res.redirect(303, destination(rt));
    const { t } = w.view.lang(req, s.user);
    const sending = bodyString(req, 'send', 8) !== '';
    const methodId = bodyString(req, 'method_id', 64);
    const route = enabledModuleRoute(app, 'post', sending ? TWO_FACTOR_START : TWO_FACTOR_VERIFY);
    if (!route) return w.message(req, res, 503, { title: t('error.disabled_title'), text: t('error.unavailable'), tone: 'error' });
    let input: Record<string, unknown>;
    let params: Record<string, string> = {};
    if (sending) {
      const methods = (await app.services.signIn.pendingMethods(s.user)) as { id: string; method: string }[];
      params = { method: methods.find((m) => m.id === methodId)?.method ?? '' };
      input = { method_id: methodId || undefined, action: 'login' };
    } else if (bodyString(req, 'credential', 1) !== '') {
      // The passkey form: the assertion web.js made for the options of POST /login/two-factor/passkey.
      let credential: unknown;
      try {
        credential = JSON.parse(bodyString(req, 'credential', 16_384));
      } catch {
        return showTwoFactor(req, res, { error: t('two_factor.passkey_failed') });
      }
      input = { credential, method_id: methodId || undefined, action: 'login', trust_device: bodyString(req, 'trust_device', 8) !== '' };
    } else {
      input = {
        code: bodyString(req, 'code', 64).trim(),
        method_id: methodId || undefined,
        action: 'login',
        trust_device: bodyString(req, 'trust_device', 8) !== '',
      };
    }
    try {
      // Input the provider's schemas refuse is a 400 too: the same "did not work" answer.
      await runModuleRoute(app, req, res, s, route, { params, body: input });
    } catch (err) {
      if (!isAppError(err) || err.status >= 500 || err.status === 429) throw err;
      return showTwoFactor(req, res, { error: t(sending ? 'two_factor.send_failed' : 'two_factor.failed') });
    }
    if (sending) return showTwoFactor(req, res, { sent: true, methodId });
    // The pending session is now a full one (same token): the sign-in is complete, so the CSRF binding turns over.
    rotateCsrfBinding(res, app.config);
    res.redirect(303, destination(rt));
  };

  /**
   * POST /login/two-factor/passkey (the page's script, with the CSRF token): the provider's
   * `POST /auth/two_factor/passkey/start` for this pending session, answered as JSON (the options, limited
   * to the user's passkeys); the assertion then comes back with the form post above.
   */
  const startPasskey = async (req: Request, res: Response) => {
    const s = await pageSession(app, req);
    const route = enabledModuleRoute(app, 'post', TWO_FACTOR_START);
    if (!s || !s.pending || !route) return res.status(400).json({ success: false, error: 'No passkey step for this browser', code: 'VALIDATION_ERROR' });
    const body = { method_id: bodyString(req, 'method_id', 64) || undefined, action: 'login' };
    let out: { options?: unknown };
    try {
      out = await runModuleRoute(app, req, res, s, route, { params: { method: 'passkey' }, body });
    } catch (err) {
      // The provider's refusal (no passkey method, the module off) is this script's JSON answer, not a page.
      if (!isAppError(err) || err.status >= 500 || err.status === 429) throw err;
      return res.status(err.status).json({ success: false, error: err.message, code: err.code });
    }
    res.json({ success: true, options: out.options ?? null });
  };

  /** POST /logout (with the CSRF token): the API's logout service, then the sign-in page. */
  const logout = async (req: Request, res: Response) => {
    const s = await pageSession(app, req);
    if (s) await app.services.auth.logout(s.token, { user: s.user, session: s.session });
    clearPageSessionCookie(res, app.config);
    res.redirect(303, '/login');
  };

  return { showLogin, submitLogin, showTwoFactor: (req: Request, res: Response) => showTwoFactor(req, res), submitTwoFactor, startPasskey, logout };
}
