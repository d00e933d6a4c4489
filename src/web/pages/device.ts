import type { Request, Response } from 'express';
import { countInClass } from '../../limits/count-in-class.js';
import { tooManyRequests } from '../../http/middleware/rate-limit-request.js';
import { ACR_1FA, ACR_2FA, amrList } from '../../services/sign-in-amr.js';
import { pageSession, type PageSession } from '../page-auth.js';
import type { WebPage } from '../web-page.js';
import { bodyString, withReturn } from '../web-page.js';

/** The longest code a person may type (XXXX-XXXX with spaces or dashes to spare). */
const CODE_MAX = 32;

/**
 * The device flow's verification page (RFC 8628 §3.3; docs/oidc.md "Devices"): `/device`, the verification URI
 * the device shows. A full Gatehouse session is required (none, or a pending second step: the hosted sign-in,
 * `/login?return_to=/device…`, the one sign-in seam). The person types the code (`?user_code=` pre-fills it),
 * sees which app asks and for what, and allows or denies; `src/oidc/device-flow.ts` writes the answer into
 * the provider's DeviceCode. Every code looked up counts in `token-validate` per address (the gate,
 * its registration in web-router.ts) and per session (here), and the page never says more than "invalid or expired".
 */
export function devicePages(w: WebPage) {
  const { app } = w;
  const oidc = app.services.oidc;

  const notFound = (req: Request, res: Response) => {
    const { t } = w.view.lang(req);
    w.message(req, res, 404, { title: t('error.not_found_title'), text: t('error.not_found'), tone: 'error' });
  };

  /** The full session, else a redirect to the sign-in page that comes back to `back`. */
  async function signedIn(req: Request, res: Response, back: string): Promise<PageSession | null> {
    const s = await pageSession(app, req);
    if (s && !s.pending) return s;
    res.redirect(303, withReturn('/login', back));
    return null;
  }

  /** A code looked up by this session: counted, refused with the 429 page when the session's budget is spent. */
  async function countLookup(s: PageSession): Promise<void> {
    const r = await countInClass(
      { config: app.config, limiter: app.limiter, modules: app.modules.registry?.() },
      'token-validate',
      `device:session:${s.session.id}`,
    );
    if (r && !r.allowed) throw tooManyRequests(r);
  }

  const renderEnter = (req: Request, res: Response, s: PageSession, code: string, error?: string) =>
    w.view.render(
      req,
      res,
      'device',
      { title: w.view.lang(req, s.user).t('device.title'), step: 'enter', code, error },
      { status: error ? 400 : 200, user: s.user },
    );

  /** GET /device[?user_code=…]: the code form (pre-filled from the link the device showed). */
  const show = async (req: Request, res: Response) => {
    if (!oidc.enabled) return notFound(req, res);
    const code = typeof req.query.user_code === 'string' ? req.query.user_code.slice(0, CODE_MAX) : '';
    const s = await signedIn(req, res, code ? `/device?user_code=${encodeURIComponent(code)}` : '/device');
    if (!s) return;
    renderEnter(req, res, s, code);
  };

  /** POST /device: `user_code` alone shows the request to confirm; with `decision` (allow, deny) answers it. */
  const submit = async (req: Request, res: Response) => {
    if (!oidc.enabled) return notFound(req, res);
    const s = await signedIn(req, res, '/device');
    if (!s) return;
    const { t } = w.view.lang(req, s.user);
    const input = bodyString(req, 'user_code', CODE_MAX);
    const decision = bodyString(req, 'decision', 8);
    if (!input.trim()) return renderEnter(req, res, s, '', t('device.invalid'));
    await countLookup(s);
    const invalid = () => renderEnter(req, res, s, input, t('device.invalid'));

    if (decision === 'allow') {
      const done = await oidc.device.approve(input, {
        userId: s.user.id,
        acr: s.session.two_factor_verified ? ACR_2FA : ACR_1FA,
        amr: amrList(s.session.amr),
        authTime: new Date(s.session.created_at),
      });
      if (!done) return invalid();
      return w.message(req, res, 200, { title: t('device.approved_title'), text: t('device.approved', { client: done.clientName }) }, s.user);
    }
    if (decision === 'deny') {
      const done = await oidc.device.deny(input, s.user.id);
      if (!done) return invalid();
      return w.message(req, res, 200, { title: t('device.denied_title'), text: t('device.denied', { client: done.clientName }) }, s.user);
    }
    const found = await oidc.device.lookup(input);
    if (!found) return invalid();
    w.view.render(
      req,
      res,
      'device',
      {
        title: t('device.confirm_title'),
        step: 'confirm',
        code: found.userCode,
        client: found.clientName,
        scopes: found.scopes.map((x) => t(`oidc.consent.scope.${x}`)),
        remembered: !found.firstParty,
      },
      { user: s.user },
    );
  };

  return { show, submit };
}
