import type { Request, Response } from 'express';
import { UNKNOWN_DEVICE } from '../../services/user-agent.js';
import { errorText } from './error-text.js';
import { withAuditScope } from '../../audit/audit-scope.js';
import { ownView } from '../../audit/own-view.js';
import { ownSecurityTypes } from '../../audit/type-filter.js';
import { isAppError, notFound, type AppError } from '../../errors/app-error.js';
import { invalidInput } from '../../errors/zod-issues.js';
import { requestAuditScope } from '../../http/request-audit.js';
import { loginAttempt, loginPassed } from '../../http/routes/email-change.routes.js';
import { profileUpdateBody } from '../../http/schemas/profile.schemas.js';
import type { AnyModuleRouteDef } from '../../modules/module-route.js';
import { enabledModuleRoute, runModuleRoute } from '../module-routes.js';
import { pageSession, type PageSession } from '../page-auth.js';
import { bodyString, withReturn, type WebPage } from '../web-page.js';
import { twoFactorSection, TWO_FACTOR_API, type Shown } from './account-two-factor.js';

/**
 * The self-service account page (/account) and its form posts. Core writes call the API's services
 * (the profile update, the own password change, social unlink, the session service); the two-step
 * verification provider is reached through its API routes found by method and path, each
 * route's own handler called in process with this page's session, its rate limit counted as the API
 * counts it. Every post runs in an audit scope with the signed-in user as actor, as the API's routes do.
 */

/** The profile fields the page edits (the spec's user fields a user may set; PUT /auth/user/me's body). */
const PROFILE_FIELDS = ['name', 'last_name', 'display_name', 'user_name', 'phone', 'title', 'dob', 'gender', 'tmz', 'lang'] as const;

/** The modules' API the page uses (found by method and path, never by module name); the two-factor section's in account-two-factor.ts. */
const API = {
  ...TWO_FACTOR_API,
} as const satisfies Record<string, [AnyModuleRouteDef['method'], string]>;
type ApiName = keyof typeof API;

const OUTCOMES = new Set([
  'verification_sent',
  'profile',
  'password',
  'session',
  'sessions',
  'two_factor_added',
  'two_factor_on',
  'two_factor_removed',
  'two_factor_cancelled',
  'devices',
  'unlinked',
  'app_revoked',
  'linked',
  'email_sent',
  'email_changed',
]);

export function accountPages(w: WebPage) {
  const { app, view } = w;
  const route = (name: ApiName) => enabledModuleRoute(app, API[name][0], API[name][1]);

  /** The signed-in user, or a redirect to the sign-in page (no session, or a pending two-factor one). */
  async function signedIn(req: Request, res: Response): Promise<PageSession | null> {
    const s = await pageSession(app, req);
    if (s && !s.pending) return s;
    res.redirect(303, withReturn('/login', '/account'));
    return null;
  }

  /** A module route's own handler, in process, as this session (`runModuleRoute`); 404 when no module serves it. */
  async function callRoute(
    req: Request,
    res: Response,
    s: PageSession,
    name: ApiName,
    input: { params?: Record<string, string>; body?: unknown } = {},
  ): Promise<Record<string, unknown>> {
    const found = route(name);
    if (!found) throw notFound('This feature is not available');
    return runModuleRoute(app, req, res, s, found, input);
  }

  /** Reads a module's list for the page; a module that is off shows nothing. */
  async function read<T>(req: Request, res: Response, s: PageSession, name: ApiName, pick: (r: Record<string, unknown>) => T): Promise<T | null> {
    if (!route(name)) return null;
    return pick(await callRoute(req, res, s, name));
  }

  async function render(req: Request, res: Response, s: PageSession, shown: Shown = {}) {
    const { t } = view.lang(req, s.user);
    const user = (await app.services.users.get(s.user.id)) ?? s.user;
    const list = await app.services.users.listSessions(user.id);
    const sessions = list
      .filter((x) => x.status === 'active')
      .sort((a, b) => +new Date(b.last_used_at) - +new Date(a.last_used_at))
      .map((x) => ({
        id: x.id,
        current: x.id === s.session.id,
        // What the console shows ("Chrome on Linux"), the raw User-Agent in the title; the raw one when no label fits.
        agent: (x.user_device && x.user_device !== UNKNOWN_DEVICE ? x.user_device : x.user_agent) || '',
        userAgent: x.user_agent ?? '',
        ip: x.ip_address ?? '',
        created: iso(x.created_at),
        used: iso(x.last_used_at),
      }));
    const own = ownSecurityTypes(app.services.audit.types().keys());
    const events = (await app.services.audit.list({ userId: user.id, types: own, limit: 15 })).events.map((e) => ownView(e, user.id));
    const tf = await twoFactor.state(req, res, s, shown);
    const social = app.config.socialLogin
      ? {
          linked: (await app.services.social.listAccounts(user.id)).map((a) => ({ provider: a.provider, email: a.provider_email ?? '' })),
          providers: app.services.social.providers().map((p) => ({
            id: p.id,
            name: p.name,
            href: `${p.login_url}?link=true&return_to=${encodeURIComponent(new URL('/account?done=linked', app.config.publicBaseUrl).toString())}`,
          })),
        }
      : null;
    // The OpenID clients the user let sign them in (third-party consents), each revocable (DELETE /auth/user/me/oidc/grants/:client_id's service).
    const apps = app.services.oidc.enabled
      ? await Promise.all(
          (await app.services.oidc.consents(user.id)).map(async (c) => ({
            client_id: c.client_id,
            name: await app.services.oidc.clients.get(c.client_id).then(
              (x) => x.name,
              () => c.client_id,
            ),
            scope: c.scope,
            granted: c.granted_at,
          })),
        )
      : null;
    const moduleFields = app.modules
      .userFields()
      .filter((f) => f.schema && !f.writeOnly && f.type === 'string')
      .map((f) => ({ name: f.name, label: f.description ?? f.name, value: stringOf((user as Record<string, unknown>)[f.name]) }));
    const outcome = shown.outcome ?? (typeof req.query.done === 'string' ? req.query.done : null);
    const done = !outcome ? null : OUTCOMES.has(outcome) ? t(`account.done.${outcome}`) : w.modules.outcome(outcome, t);
    // The installed modules' sections (their manifests' `web.account`: passkeys, privacy, ...), placed by their order among core's.
    const moduleSections = await w.modules.accountSections(req, res, s);
    view.render(
      req,
      res,
      'account',
      {
        title: t('account.title'),
        profile: {
          email: user.email,
          verified: Boolean(user.is_verified),
          fields: PROFILE_FIELDS.map((name) => ({ name, value: stringOf(user[name]) })),
          moduleFields,
        },
        // The email section's form asks for the current password; an account without one sets it first.
        emailChange: { hasPassword: Boolean(user.password_hash) },
        sessions,
        events: events.map((e) => ({ type: e.type, label: label(t, e.type), outcome: e.outcome, at: iso(e.at), ip: e.ip ?? '' })),
        twoFactor: tf.twoFactor,
        // An authenticator app's setup started earlier and not confirmed: its panel again (a fresh one in `shown` wins).
        totp: tf.totp,
        social,
        apps,
        moduleSections,
        ...shown,
        done,
      },
      { status: shown.status, user },
    );
  }

  const show = async (req: Request, res: Response) => {
    const s = await signedIn(req, res);
    if (s) await render(req, res, s);
  };

  /**
   * A form post on the account page: the session, the action in the user's audit scope, then back to
   * the page (303, with the outcome) or the page again with the refusal. 429 and 5xx go to the page errors.
   */
  const action =
    (fn: (req: Request, res: Response, s: PageSession) => Promise<string | Shown | void>, anchor: string) => async (req: Request, res: Response) => {
      const s = await signedIn(req, res);
      if (!s) return;
      let out: string | Shown | void;
      try {
        out = await withAuditScope(requestAuditScope(req, s.user), () => fn(req, res, s));
      } catch (err) {
        if (!isAppError(err) || err.status >= 500 || err.status === 429) throw err;
        return render(req, res, s, { error: describe(err), status: err.status });
      }
      if (res.headersSent) return;
      if (typeof out === 'string') return res.redirect(303, `/account?done=${out}#${anchor}`);
      await render(req, res, s, out ?? {});
    };

  const field = (req: Request, name: string, max = 200) => bodyString(req, name, max);

  /** PUT /auth/user/me's service: the same body rules (profileUpdateBody), an empty field clears it. */
  const profile = action(async (req, _res, s) => {
    const input: Record<string, unknown> = {};
    const names = [
      ...PROFILE_FIELDS,
      ...app.modules
        .userFields()
        .filter((f) => f.schema && !f.writeOnly && f.type === 'string')
        .map((f) => f.name),
    ];
    const body = req.body as Record<string, unknown>;
    for (const name of names) {
      if (!(name in body)) continue;
      const v = field(req, name, 500).trim();
      input[name] = v === '' ? null : v;
    }
    const parsed = profileUpdateBody.safeParse(input);
    if (!parsed.success) throw invalidInput(parsed.error);
    await app.services.users.updateProfile(s.user, parsed.data);
    return 'profile';
  }, 'profile');

  /** POST /auth/password-change/self's service (policy, current password, other sessions ended); its `login` class. */
  const password = action(async (req, _res, s) => {
    const current = field(req, 'current_password', 1024);
    const next = field(req, 'new_password', 1024);
    await app.services.passwordFlows.changeOwn({ user: s.user, sessionId: s.session.id }, current, next);
    // The current password was right: the post's hit in `login` goes back, as a sign-in's does.
    await loginPassed(app, req);
    return 'password';
  }, 'password');

  /**
   * POST /auth/user/me/email's service: the same checks, the same neutral outcome whether or not the
   * address is free, the password check counted in `login` (the gate counts the post in `email-change`).
   */
  const changeEmail = action(async (req, res, s) => {
    await app.services.emailChange.request(
      { user: s.user, sessionId: s.session.id },
      { newEmail: field(req, 'new_email', 1000), password: field(req, 'current_password', 1024) },
      { beforePasswordCheck: loginAttempt(app, req, res) },
    );
    await loginPassed(app, req);
    return 'email_sent';
  }, 'email');

  // The verification link again (POST /auth/resend-verification's service), for the account's own address only.
  const resendVerification = action(async (_req, _res, s) => {
    await app.services.verification.resend(s.user.email);
    return 'verification_sent';
  }, 'email');

  const revokeSession = action(async (req, _res, s) => {
    await app.services.users.revokeOwnSession(s.user, field(req, 'session_id', 64), s.session.id);
    return 'session';
  }, 'sessions');

  const revokeOthers = action(async (_req, _res, s) => {
    await app.services.users.revokeOtherSessions(s.user, s.session.id);
    return 'sessions';
  }, 'sessions');

  const twoFactor = twoFactorSection({ route, callRoute, read, action, field });

  /** Withdraws an OpenID client's access (its grant and tokens end; the app must ask again), as DELETE /auth/user/me/oidc/grants/:client_id. */
  const revokeApp = action(async (req, _res, s) => {
    if (!(await app.services.oidc.revokeConsent(s.user.id, field(req, 'client_id', 64)))) throw notFound('No access given to this client');
    return 'app_revoked';
  }, 'apps');

  const unlink = action(async (req, _res, s) => {
    await app.services.social.unlink(s.user, field(req, 'provider', 64));
    return 'unlinked';
  }, 'social');

  return {
    show,
    /** A module section's post (module-pages.ts), as the page's own: signed in, the user's audit scope, post/redirect/get. */
    moduleAction: (fn: (req: Request, res: Response, s: PageSession) => Promise<string | void>, anchor: string) => action(fn, anchor),
    profile,
    password,
    changeEmail,
    resendVerification,
    revokeSession,
    revokeOthers,
    addTwoFactor: twoFactor.add,
    confirmTwoFactor: twoFactor.confirm,
    cancelTwoFactor: twoFactor.cancel,
    removeTwoFactor: twoFactor.remove,
    backupCodes: twoFactor.backupCodes,
    forgetDevices: twoFactor.forgetDevices,
    unlink,
    revokeApp,
  };
}

function describe(err: AppError): string {
  return errorText(err, true);
}

/** An event's name in the page's language; a type without one (a module's own) shows as its code. */
function label(t: (key: string) => string, type: string): string | null {
  try {
    return t(`account.event.${type}`);
  } catch {
    return null;
  }
}

const iso = (d: Date | string | null | undefined): string => (d ? new Date(d).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '');
const stringOf = (v: unknown): string => (v === null || v === undefined ? '' : v instanceof Date ? v.toISOString().slice(0, 10) : String(v));
