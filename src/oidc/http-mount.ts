import { amrList } from '../services/sign-in-amr.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response, type RequestHandler } from 'express';
import type Provider from 'oidc-provider';
import type { AppContext } from '../app-context.js';
import { ACR_1FA, ACR_2FA, checkInteractionCsrf, interactionCsrf, INTERACTION_PATH, OIDC_PREFIX } from './provider.js';
import type { OidcHttpGlue } from './oidc.js';
import { pickLang } from '../web/i18n.js';
import type { WebView } from '../web/view.js';
import type { OidcPage } from './pages.js';
import { trustedFormOrigin } from '../web/page-security.js';
import { withAuditScope } from '../audit/audit-scope.js';
import { requestAuditScope } from '../http/request-audit.js';
import { HOST_SESSION_COOKIE, parseCookies, SESSION_COOKIE, sessionCookieToken } from '../http/request-context.js';
import { outageRetryAfter } from '../http/middleware/errors.js';
import { OUTAGE_BODY } from '../errors/app-error.js';
import { consentName } from './client-metadata.js';

/** The provider's endpoints that count in their own rate-limit classes: create-app.ts hands them to the gate. */
export { OIDC_LIMIT_CLASSES } from './provider.js';

/** The scopes the consent page names (each has an `oidc.consent.scope.*` string). */
const OIDC_SCOPES = new Set(['openid', 'profile', 'email', 'phone', 'roles', 'offline_access']);

/** Sends one of the view layer's pages (templates/web/pages) with the policy made for it. */
function send(res: ServerResponse, status: number, page: OidcPage, lang: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Language', lang);
  res.setHeader('Content-Security-Policy', page.csp);
  res.end(page.html);
}

const originOf = (uri: string): string | null => {
  try {
    return new URL(uri).origin;
  } catch {
    return null;
  }
};

/** The HTTP side of the OpenID provider: its endpoints (oidc-provider's Koa app), the sign-in hand-off and the consent page. */
export function oidcRouter(app: AppContext, view: WebView): RequestHandler {
  const oidc = app.services.oidc;
  const router = express.Router();
  if (!oidc.enabled) return router;
  const cookieSecure = /^https:/i.test(app.config.publicBaseUrl);
  const publicUrl = new URL(app.config.publicBaseUrl);
  /**
   * What the provider (a Koa app) reads the request's origin and address from: PUBLIC_URL's scheme and host,
   * never the request's Host or X-Forwarded-Host (discovery's endpoint URLs were built from the Host header, so
   * a request naming another host got a document pointing elsewhere), and the client address as Express read
   * it under TRUST_PROXY. provider.ts sets `proxy` for Koa to read these.
   */
  const fromPublicUrl: RequestHandler = (req, _res, next) => {
    req.headers.host = publicUrl.host;
    req.headers['x-forwarded-host'] = publicUrl.host;
    req.headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
    req.headers['x-forwarded-for'] = req.ip ?? req.socket.remoteAddress ?? '';
    delete req.headers.forwarded;
    next();
  };
  router.use((req, res, next) =>
    req.path === '/.well-known/openid-configuration' || req.path.startsWith(`${OIDC_PREFIX}/`) ? fromPublicUrl(req, res, next) : next(),
  );

  const gatehouseSession = async (req: IncomingMessage) => {
    const token = sessionCookieToken(req.headers.cookie);
    if (!token) return null;
    try {
      const v = await app.services.sessions.validate(token);
      return { userId: v.user.id, sessionId: v.session.id, session: v.session, user: v.user };
    } catch {
      return null;
    }
  };
  const glue: OidcHttpGlue = {
    gatehouseSession,
    async endGatehouseSession(req, res) {
      const jar = parseCookies(req.headers.cookie);
      // Either name (docs/sessions.md, "Cookie names"): both are ended and cleared.
      for (const name of [HOST_SESSION_COOKIE, SESSION_COOKIE]) {
        const token = jar[name];
        if (token) await app.services.sessions.revokeToken(token).catch(() => false);
        if (name === HOST_SESSION_COOKIE && !(token && cookieSecure)) continue;
        res.appendHeader(
          'Set-Cookie',
          `${name}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=${app.config.cookieSameSite[0].toUpperCase()}${app.config.cookieSameSite.slice(1)}${cookieSecure ? '; Secure' : ''}`,
        );
      }
    },
    async renderLogout(form, { name, keepsSession, returnTo }, req) {
      // oidc-provider's form is its end-session confirmation action and its xsrf token; the template rebuilds
      // it with both escaped. After the post the provider redirects to the client's post-logout URI: a form target.
      const action = /action="([^"]+)"/.exec(form)?.[1];
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(form)?.[1];
      if (!action || !xsrf) throw new Error('oidc-provider changed its logout form');
      const opts = await pageOpts(req, returnTo);
      return view.document('oidc-logout', { title: view.translator(opts.lang)('oidc.logout.title'), action, xsrf, client: name, keepsSession }, opts);
    },
    async renderLoggedOut(clientName, req) {
      const { lang, t } = await pageLang(req);
      const text = clientName === null ? t('oidc.logged_out.body') : t('oidc.logged_out.body_client', { client: clientName });
      return view.document('message', { title: t('oidc.logged_out.title'), text, tone: 'note' }, { lang });
    },
  };
  // The hosted /device page (src/web/pages/device.ts) reaches the provider with the same glue.
  oidc.attach(glue);
  /** The signed-in user's language, else the browser's (as the hosted pages choose). */
  const pageLang = async (req: IncomingMessage) => {
    const lang = pickLang((await gatehouseSession(req))?.user.lang, req.headers['accept-language']);
    return { lang, t: view.translator(lang) };
  };
  /** A page's language, and the origin of where its form's post ends (a client's URI), as a form target. */
  const pageOpts = async (req: IncomingMessage, target: string | null) => {
    const { lang } = await pageLang(req);
    return { lang, formTargets: [target ? originOf(target) : null].filter((o): o is string => o !== null) };
  };
  const provider = (force = false): Promise<Provider> => oidc.provider(glue, { force });

  /** Every handler here, the provider's endpoints included, runs in the request's audit scope: its events carry the address, agent and request id. */
  const wrap =
    (fn: (req: Request, res: Response) => Promise<void>): RequestHandler =>
    (req, res, next: NextFunction) => {
      withAuditScope(requestAuditScope(req, null), () => fn(req, res)).catch(next);
    };

  /** max_age: the Gatehouse session may not be older than it allows. */
  const tooOld = (params: Record<string, unknown>, createdAt: Date) =>
    params.max_age !== undefined && Math.floor(Date.now() / 1000) - Math.floor(createdAt.getTime() / 1000) > Number(params.max_age);

  async function grantAll(p: Provider, details: Awaited<ReturnType<Provider['interactionDetails']>>, accountId: string): Promise<string> {
    const { prompt, params } = details;
    const grant = details.grantId ? await p.Grant.find(details.grantId) : new p.Grant({ accountId, clientId: params.client_id });
    const d = prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    return grant.save();
  }

  /**
   * The interaction of this request, or null when a browser was told it has ended (expired, finished,
   * or its cookie gone: oidc-provider's SessionNotFound) on a page. Other callers get the JSON error
   * (400 `INVALID_REQUEST`, src/http/middleware/errors.ts).
   */
  async function interactionOf(p: Provider, req: Request, res: Response) {
    try {
      return await p.interactionDetails(req, res);
    } catch (err) {
      if ((err as Error).name !== 'SessionNotFound' || req.accepts(['json', 'html']) !== 'html') throw err;
      const { t, lang } = await pageLang(req);
      send(res, 400, view.document('message', { title: t('oidc.expired.title'), text: t('oidc.expired.body'), tone: 'error' }, { lang }), lang);
      return null;
    }
  }

  router.get(
    `${INTERACTION_PATH}/:uid`,
    wrap(async (req, res) => {
      const p = await provider();
      const details = await interactionOf(p, req, res);
      if (!details) return;
      const { uid, prompt, params } = details;
      const returnTo = `${INTERACTION_PATH}/${uid}`;
      if (prompt.name === 'login') {
        const gh = await gatehouseSession(req);
        // reauth=1 (prompt=login, max_age): the hosted page shows its form to a browser that has a session.
        const toLogin = (reauth = false) => res.redirect(303, `/login?return_to=${encodeURIComponent(returnTo)}${reauth ? '&reauth=1' : ''}`);
        if (!gh) return toLogin();
        if (tooOld(params, new Date(gh.session.created_at))) return toLogin(true);
        // prompt=login: the session the browser had when the request came is not a new sign-in; the
        // interaction keeps which one that was, and only a different (newer) session completes it.
        if (
          String(params.prompt ?? '')
            .split(' ')
            .includes('login')
        ) {
          const before = (details.result as { gatehouse_before?: string } | undefined)?.gatehouse_before;
          if (before === undefined || before === gh.session.id) {
            if (before === undefined) await p.interactionResult(req, res, { gatehouse_before: gh.session.id }, { mergeWithLastSubmission: false });
            return toLogin(true);
          }
        }
        const mfa = Boolean(gh.session.two_factor_verified);
        // What the sign-in seam recorded (src/services/sign-in-amr.ts): its one owner. A session from before it was recorded says none.
        const amr = amrList(gh.session.amr);
        await p.interactionFinished(
          req,
          res,
          {
            login: {
              accountId: gh.userId,
              ts: Math.floor(new Date(gh.session.created_at).getTime() / 1000),
              acr: mfa ? ACR_2FA : ACR_1FA,
              amr: amr.length ? amr : undefined,
              remember: true,
            },
          },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      if (prompt.name === 'consent') {
        const accountId = details.session?.accountId;
        const client = await p.Client.find(params.client_id);
        if (!accountId || !client) {
          await p.interactionFinished(req, res, { error: 'access_denied', error_description: 'No session' }, { mergeWithLastSubmission: false });
          return;
        }
        if (client.first_party === true) {
          const grantId = await grantAll(p, details, accountId);
          await p.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
          return;
        }
        const scopes = String(params.scope ?? '')
          .split(' ')
          .filter((x) => OIDC_SCOPES.has(x));
        // The registered APIs' own scopes asked for (resource indicators), each under the API's name.
        const asked = (prompt.details as { missingResourceScopes?: Record<string, string[]> }).missingResourceScopes ?? {};
        const apis = await Promise.all(Object.entries(asked).map(async ([id, list]) => ({ name: (await oidc.resources.find(id))?.name ?? id, scopes: list })));
        const { lang, t } = await pageLang(req);
        const data = {
          title: t('oidc.consent.title'),
          client: consentName(client),
          scopes,
          apis,
          action: `${returnTo}/confirm`,
          interactionCsrf: interactionCsrf(oidc.secret(), uid),
        };
        // The post's redirect ends at the client's redirect URI: a form target (browsers apply form-action to it).
        send(res, 200, view.document('oidc-consent', data, { lang, formTargets: [new URL(String(params.redirect_uri)).origin] }), lang);
        return;
      }
      await p.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: `Unsupported prompt ${prompt.name}` },
        { mergeWithLastSubmission: false },
      );
    }),
  );

  router.post(
    `${INTERACTION_PATH}/:uid/confirm`,
    express.urlencoded({ extended: false, limit: '4kb' }),
    wrap(async (req, res) => {
      const p = await provider();
      const details = await interactionOf(p, req, res);
      if (!details) return;
      const body = (req.body ?? {}) as Record<string, unknown>;
      // The token, and, as on the hosted pages, the origin the browser names for the post (a cross-site post is refused).
      if (details.prompt.name !== 'consent' || !checkInteractionCsrf(oidc.secret(), details.uid, body.csrf) || !trustedFormOrigin(req, app.config)) {
        res.status(403).json({ success: false, error: 'Invalid consent form', code: 'FORBIDDEN' });
        return;
      }
      const accountId = details.session?.accountId;
      if (!accountId || body.decision !== 'allow') {
        await p.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user refused access' }, { mergeWithLastSubmission: false });
        return;
      }
      const grantId = await grantAll(p, details, accountId);
      // The user consented: their event, with them as its actor.
      const gh = await gatehouseSession(req);
      await withAuditScope(requestAuditScope(req, gh?.userId === accountId ? gh.user : null), () =>
        oidc.rememberConsent(accountId, details.params.client_id, grantId, String(details.params.scope ?? '')),
      );
      await p.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    }),
  );

  // Everything else under /oidc and discovery is the provider's (a Koa app).
  const callbacks = new WeakMap<Provider, ReturnType<Provider['callback']>>();
  const toProvider = wrap(async (req, res) => {
    const p = await provider();
    // The API's policy allows no script at all, which left oidc-provider's own auto-submitting pages blank (the
    // form_post response mode, and the logout confirmation after the Gatehouse session ended). Its pages hash
    // their one inline script into an existing script-src (its helpers/script_src_sha.js): this policy has one
    // that allows nothing else ('report-sample' is no source), so exactly that script runs. Forms may post to
    // the client's redirect URI (form-action unset), nothing may frame the page.
    res.setHeader('Content-Security-Policy', "default-src 'none'; script-src 'report-sample'; frame-ancestors 'none'; base-uri 'none'");
    let cb = callbacks.get(p);
    if (!cb) {
      callbacks.set(p, (cb = p.callback()));
      // The provider answers what it cannot handle with a 500 "server_error"; an outage (Redis holding an
      // interaction, the database) is a 503 with Retry-After instead, as everywhere else.
      p.on('server_error', (ctx: { status: number; type: string; body: unknown; set(name: string, value: string): void }, err: unknown) => {
        const retryAfter = outageRetryAfter(err);
        if (retryAfter === null) return;
        ctx.status = 503;
        ctx.set('Retry-After', String(retryAfter));
        ctx.type = 'application/json';
        ctx.body = OUTAGE_BODY;
      });
    }
    cb(req, res);
  });
  // Not mounted with a path: the provider's routes are absolute (it reads a mount path from baseUrl).
  router.use((req, res, next) => (req.path.startsWith(`${OIDC_PREFIX}/`) ? toProvider(req, res, next) : next()));
  router.get('/.well-known/openid-configuration', toProvider);
  return router;
}
