import type { Request, Response } from 'express';
import { errorText } from './error-text.js';
import { isAppError } from '../../errors/app-error.js';
import { invalidInput } from '../../errors/zod-issues.js';
import { registerPublicBody } from '../../http/schemas/auth.schemas.js';
import { clientInfo } from '../../http/routes/auth-responses.js';
import { emailField } from '../../services/user-fields.js';
import { pageSession, setPageSessionCookie } from '../page-auth.js';
import { bodyString, destination, withReturn, type WebPage } from '../web-page.js';

const TOKEN_RE = /^[A-Za-z0-9_\-.~]{1,200}$/;
const tokenOf = (v: unknown): string | null => (typeof v === 'string' && TOKEN_RE.test(v) ? v : null);

/** Registration, the reset link's pages and the verification link's page: the API's services, nothing else. */
export function accountFlowPages(w: WebPage) {
  const { app, view } = w;
  const registrationOpen = () => app.config.registrationEnabled && !app.config.registrationRequiresBridgeSecret;

  const notFound = (req: Request, res: Response) => {
    const { t } = view.lang(req);
    w.message(req, res, 404, { title: t('error.not_found_title'), text: t('error.not_found'), tone: 'error' });
  };

  const renderRegister = (
    req: Request,
    res: Response,
    rt: { to: string | null },
    extra: { error?: string; values?: Record<string, string>; status?: number } = {},
  ) => {
    const { t } = view.lang(req);
    view.render(
      req,
      res,
      'register',
      { title: t('register.submit'), error: extra.error, values: extra.values ?? {}, returnTo: rt.to, returnQuery: withReturn('', rt.to) },
      { status: extra.status },
    );
  };

  const showRegister = (req: Request, res: Response) => {
    if (!registrationOpen()) return notFound(req, res);
    const rt = w.returnTo(req);
    if (rt) renderRegister(req, res, rt);
  };

  /** POST /register: the API's public registration (its `registration` class counted by the gate). */
  const submitRegister = async (req: Request, res: Response) => {
    if (!registrationOpen()) return notFound(req, res);
    const rt = w.returnTo(req);
    if (!rt) return;
    const values = { name: bodyString(req, 'name', 100), last_name: bodyString(req, 'last_name', 100), email: bodyString(req, 'email', 254) };
    const input: Record<string, string> = { email: values.email, password: bodyString(req, 'password', 1024) };
    if (values.name.trim()) input.name = values.name.trim();
    if (values.last_name.trim()) input.last_name = values.last_name.trim();
    const { lang } = view.lang(req);
    input.lang = lang;
    const parsed = registerPublicBody.safeParse(input);
    try {
      if (!parsed.success) throw invalidInput(parsed.error);
      const { session } = await app.services.auth.registerPublic(parsed.data, clientInfo(req));
      if (!session) return res.redirect(303, `/login?done=registered${rt.to ? `&return_to=${encodeURIComponent(rt.to)}` : ''}`);
      setPageSessionCookie(res, app.config, session.token, new Date(session.session.expires_at));
      res.redirect(303, destination(rt));
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err;
      renderRegister(req, res, rt, { error: errorText(err), values, status: err.status });
    }
  };

  const showForgot = (req: Request, res: Response) => {
    const { t } = view.lang(req);
    view.render(req, res, 'forgot-password', { title: t('forgot.title'), sent: req.query.sent === '1' });
  };

  /** POST /forgot-password: the same answer whatever the address (the service does the same work). */
  const submitForgot = async (req: Request, res: Response) => {
    const parsed = emailField.safeParse(bodyString(req, 'email', 254));
    if (!parsed.success) {
      const { t } = view.lang(req);
      return view.render(req, res, 'forgot-password', { title: t('forgot.title'), error: parsed.error.issues[0]?.message ?? 'invalid email' }, { status: 400 });
    }
    await app.services.passwordFlows.requestReset(parsed.data, null);
    res.redirect(303, '/forgot-password?sent=1');
  };

  const invalidLink = (req: Request, res: Response, key: string) => {
    const { t } = view.lang(req);
    w.message(req, res, 400, { title: t('error.title'), text: t(key), tone: 'error', link: { href: '/forgot-password', label: t('forgot.title') } });
  };

  /** GET /reset-password?token=: the form, when the link is still good (peeking does not use it up). */
  const showReset = async (req: Request, res: Response) => {
    const token = tokenOf(req.query.token);
    if (!token || !(await app.services.passwordFlows.isResetTokenValid(token))) return invalidLink(req, res, 'reset.invalid');
    const { t } = view.lang(req);
    view.render(req, res, 'reset-password', { title: t('reset.title'), token });
  };

  /** POST /reset-password: the API's completeReset (policy, token, sessions ended, events). */
  const submitReset = async (req: Request, res: Response) => {
    const token = tokenOf(bodyString(req, 'token', 200));
    if (!token) return invalidLink(req, res, 'reset.invalid');
    try {
      await app.services.passwordFlows.completeReset(token, bodyString(req, 'password', 1024));
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err;
      if (err.code === 'INVALID_TOKEN' || err.status === 401) return invalidLink(req, res, 'reset.invalid');
      const { t } = view.lang(req);
      return view.render(req, res, 'reset-password', { title: t('reset.title'), token, error: err.message }, { status: err.status });
    }
    res.redirect(303, '/login?done=reset');
  };

  /** GET /verify-email?token=: a button, so a mail scanner opening the link does not use it up. */
  const showVerify = (req: Request, res: Response) => {
    const token = tokenOf(req.query.token);
    if (!token) return invalidLink(req, res, 'verify.invalid');
    const { t } = view.lang(req);
    view.render(req, res, 'verify-email', { title: t('verify.title'), token });
  };

  const submitVerify = async (req: Request, res: Response) => {
    const token = tokenOf(bodyString(req, 'token', 200));
    const user = token ? await app.services.verification.verify(token) : null;
    if (!user) return invalidLink(req, res, 'verify.invalid');
    res.redirect(303, '/login?done=verified');
  };

  /** GET /account/email/confirm?token=: a button (no session needed), so a mail scanner opening the link changes nothing. */
  const showEmailConfirm = (req: Request, res: Response) => {
    const { t } = view.lang(req);
    const token = tokenOf(req.query.token);
    if (!token) return emailLinkRefused(req, res, 400, t('email_change.invalid'));
    view.render(req, res, 'email-confirm', { title: t('email_change.title'), token });
  };

  /** POST /account/email/confirm: POST /auth/user/me/email/confirm's service; back to the account page when signed in as that user. */
  const submitEmailConfirm = async (req: Request, res: Response) => {
    const { t } = view.lang(req);
    const token = tokenOf(bodyString(req, 'token', 200));
    if (!token) return emailLinkRefused(req, res, 400, t('email_change.invalid'));
    let changed;
    try {
      changed = await app.services.emailChange.confirm(token);
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err;
      return emailLinkRefused(req, res, err.status, err.status === 409 ? t('email_change.taken') : t('email_change.invalid'));
    }
    const s = await pageSession(app, req);
    if (s && !s.pending && s.user.id === changed.user.id) return res.redirect(303, '/account?done=email_changed#email');
    w.message(req, res, 200, {
      title: t('email_change.done_title'),
      text: t('email_change.done', { email: changed.user.email }),
      link: { href: '/login', label: t('error.go_sign_in') },
    });
  };

  const emailLinkRefused = (req: Request, res: Response, status: number, text: string) => {
    const { t } = view.lang(req);
    w.message(req, res, status, { title: t('error.title'), text, tone: 'error', link: { href: '/account#email', label: t('account.title') } });
  };

  return {
    showRegister,
    submitRegister,
    showForgot,
    submitForgot,
    showReset,
    submitReset,
    showVerify,
    submitVerify,
    showEmailConfirm,
    submitEmailConfirm,
  };
}
