import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { isAppError, unauthorized } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import { setSessionCookie } from '../http/cookies.js';
import { defineRoute } from '../http/define-route.js';
import { parseCookies } from '../http/request-context.js';
import { clientInfo, iso, loginShape, pendingShape, sessionFields } from '../http/routes/auth-responses.js';
import { withParams } from '../services/account-links.js';
import type { LinkedAccountRecord } from './account-repository.js';
import { FLOW_TTL_SEC } from './flow-store.js';
import type { SocialOutcome } from './social-service.js';

/** The cookie binding a started sign-in to the browser that started it (the callback must bring it back). */
export const FLOW_COOKIE = 'gh_social_flow';
const FLOW_COOKIE_PATH = '/auth/social';

const isHttps = (app: AppContext) => /^https:/i.test(app.config.publicBaseUrl);
const frontendLogin = (app: AppContext) => `${(app.config.frontendUrl ?? app.config.appUrl ?? app.config.publicBaseUrl).replace(/\/+$/, '')}/login`;

/**
 * Apple posts its callback cross-site, where only a SameSite=None cookie is sent (and browsers take
 * those only when Secure): for form-post providers on https the flow cookie is SameSite=None.
 */
function setFlowCookie(res: Response, app: AppContext, binding: string, formPost: boolean): void {
  const secure = isHttps(app);
  res.cookie(FLOW_COOKIE, binding, {
    httpOnly: true,
    secure,
    sameSite: formPost && secure ? 'none' : 'lax',
    path: FLOW_COOKIE_PATH,
    maxAge: FLOW_TTL_SEC * 1000,
  });
}

const text = (max: number) => z.string().max(max).optional();

export const socialProviders = defineRoute({
  method: 'get',
  path: '/auth/social/providers',
  summary: 'List the social sign-in providers configured',
  auth: 'public',
  handler: ({ app }) => ({ success: true, providers: app.services.social.providers() }),
});

export const socialLogin = defineRoute({
  method: 'get',
  path: '/auth/social/:provider/login',
  summary: 'Start a social sign-in (redirects to the provider)',
  // A full session, when sent, is who asks to link (an invalid, expired or pending one reads as none).
  auth: 'optional-session',
  rateLimit: 'social-login',
  query: z.object({
    return_to: text(2000),
    format: z.enum(['json', 'redirect']).optional(),
    link: z.enum(['true', 'false', '1', '0']).optional(),
  }),
  async handler({ app, res, query, params, auth }) {
    const social = app.services.social;
    social.providerFor(params.provider);
    const returnTo = social.checkReturnTo(query.return_to);
    let linkUserId: string | null = null;
    if (query.link === 'true' || query.link === '1') {
      // Linking adds a way into an account: only its owner, with a full session, may start it.
      if (!auth.user) throw unauthorized('Sign in first to link a provider account');
      linkUserId = auth.user.id;
    }
    const started = await social.start(params.provider, { returnTo, format: query.format === 'json' ? 'json' : null, linkUserId });
    setFlowCookie(res, app, started.binding, started.formPost);
    res.redirect(302, started.url);
  },
});

const callbackFields = {
  code: text(4096),
  state: text(512),
  error: text(200),
  format: z.enum(['json', 'redirect']).optional(),
};

export const socialCallback = defineRoute({
  method: 'get',
  path: '/auth/social/:provider/callback',
  summary: "Finish a social sign-in (the provider's redirect back)",
  auth: 'public',
  rateLimit: 'social-login',
  query: z.object(callbackFields),
  handler: ({ app, req, res, query, params }) => callback(app, req, res, params.provider, { ...query }),
});

/** Apple's form_post callback (application/x-www-form-urlencoded; `user` carries the name, first sign-in only). */
export const socialCallbackPost = defineRoute({
  method: 'post',
  path: '/auth/social/:provider/callback',
  summary: 'Finish a social sign-in (form_post answer from the provider)',
  auth: 'public',
  rateLimit: 'social-login',
  middleware: [express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 20 })],
  body: z.object({ ...callbackFields, user: text(4096) }),
  query: z.object({ format: callbackFields.format }),
  handler: ({ app, req, res, body, query, params }) => callback(app, req, res, params.provider, { ...body, format: query.format ?? body.format }),
});

async function callback(
  app: AppContext,
  req: Request,
  res: Response,
  provider: string,
  input: { code?: string; state?: string; error?: string; format?: string; user?: string },
) {
  const social = app.services.social;
  // Off, or an unknown provider: plain JSON errors (there is no flow to return to).
  social.providerFor(provider);
  let json = input.format === 'json';
  let base = frontendLogin(app);
  const binding = parseCookies(req.headers.cookie)[FLOW_COOKIE];
  res.clearCookie(FLOW_COOKIE, { path: FLOW_COOKIE_PATH, httpOnly: true, secure: isHttps(app) });
  try {
    const outcome = await social.callback(
      provider,
      { state: input.state, code: input.code, error: input.error, binding, extras: { userJson: input.user }, client: clientInfo(req) },
      (flow) => {
        if (flow.format === 'json') json = true;
        if (flow.returnTo) base = flow.returnTo;
      },
    );
    if (json) return answer(app, res, outcome, 'social_auth');
    res.redirect(302, withParams(base, redirectParams(app, res, outcome)));
    return undefined;
  } catch (err) {
    if (json) throw err;
    const code = isAppError(err) ? String(err.code) : Codes.INTERNAL;
    if (!isAppError(err)) app.logger.error({ err: (err as Error)?.message, provider }, 'social login callback failed');
    res.redirect(302, withParams(base, { social_login: 'error', provider, error: code }));
    return undefined;
  }
}

function redirectParams(app: AppContext, res: Response, o: SocialOutcome): Record<string, string> {
  const p: Record<string, string> = { social_login: 'success', provider: o.provider };
  if (o.kind === 'linked') return { ...p, linked: 'true' };
  const { login } = o;
  if (login.status === 'pending') return { ...p, requires_2fa: 'true', session_id: login.token };
  if (app.config.socialCallbackMode === 'params') return { ...p, session_id: login.token };
  setSessionCookie(res, app.config, login.token, new Date(login.session.expires_at));
  return p;
}

export const accountView = (a: LinkedAccountRecord) => ({
  id: a.id,
  provider: a.provider,
  provider_user_id: a.provider_user_id,
  provider_email: a.provider_email,
  provider_name: a.provider_name,
  provider_picture: a.provider_picture,
  linked_at: iso(a.linked_at),
  last_updated: iso(a.last_updated),
});

/** The JSON answer of the callback (format=json) and of login-api. */
async function answer(app: AppContext, res: Response, o: SocialOutcome, loginType: 'social_auth' | 'social_auth_api') {
  if (o.kind === 'linked') return { success: true, linked: true, provider: o.provider, account: accountView(o.account) };
  const { login } = o;
  setSessionCookie(res, app.config, login.token, new Date(login.session.expires_at));
  const extra = { loginType, provider: o.provider, is_new_user: o.isNewUser };
  if (login.status === 'pending') {
    return { ...(await pendingShape(app, login.user, login.token, login.methods)), ...sessionFields(login.token, login.session), ...extra };
  }
  return { ...loginShape(app, login.user, login.token, login.session), ...extra };
}

const tokenField = z.string().min(1).max(16_384).optional();

export const socialLoginApi = defineRoute({
  method: 'post',
  path: '/auth/social/:provider/login-api',
  summary: 'Sign in with a provider token obtained by a client app',
  auth: 'public',
  rateLimit: 'social-api',
  body: z.object({
    idToken: tokenField,
    id_token: tokenField,
    accessToken: tokenField,
    access_token: tokenField,
    nonce: z.string().min(1).max(512).optional(),
  }),
  async handler({ app, req, res, body, params }) {
    const outcome = await app.services.social.loginApi(
      params.provider,
      { idToken: body.idToken ?? body.id_token, accessToken: body.accessToken ?? body.access_token, nonce: body.nonce },
      clientInfo(req),
    );
    return answer(app, res, outcome, 'social_auth_api');
  },
});

export const socialAccounts = defineRoute({
  method: 'get',
  path: '/auth/social/accounts',
  summary: 'List the social accounts linked to you',
  auth: 'session',
  async handler({ app, auth }) {
    const accounts = await app.services.social.listAccounts(auth.user.id);
    return { success: true, accounts: accounts.map(accountView) };
  },
});

export const socialUnlink = defineRoute({
  method: 'delete',
  path: '/auth/social/accounts/:provider',
  summary: 'Unlink one of your social accounts',
  auth: 'session',
  async handler({ app, auth, params }) {
    await app.services.social.unlink(auth.user, params.provider);
    return { success: true, message: 'Account unlinked', provider: params.provider };
  },
});

const ADMIN = { roles: ['admin', 'superadmin'] } as const;
const adminUserParams = z.object({ user_id: z.string().min(1).max(64) });

/** An admin sees a user's linked provider accounts (the user's own view of them). */
export const adminSocialAccounts = defineRoute({
  method: 'get',
  path: '/auth/admin/users/:user_id/social-accounts',
  summary: "List a user's linked social accounts (admin)",
  auth: ADMIN,
  rateLimit: 'admin',
  params: adminUserParams,
  async handler({ app, params }) {
    const accounts = await app.services.social.adminListAccounts(params.user_id);
    return { success: true, user_id: params.user_id, accounts: accounts.map(accountView) };
  },
});

/**
 * An admin unlinks a user's provider account: the user's own last-way rule (400
 * SOCIAL_LAST_SIGN_IN_METHOD), a superadmin's only by a superadmin; `social.unlinked` with the admin as
 * actor (`details.by: admin`), which mails the user and reaches the webhooks that take it.
 */
export const adminSocialUnlink = defineRoute({
  method: 'delete',
  path: '/auth/admin/users/:user_id/social-accounts/:provider',
  summary: "Unlink a user's social account (admin)",
  auth: ADMIN,
  rateLimit: 'admin',
  params: adminUserParams.extend({ provider: z.string().min(1).max(32) }),
  async handler({ app, auth, params }) {
    await app.services.social.adminUnlink(auth.user, params.user_id, params.provider);
    return { success: true, message: 'Account unlinked; the user was told by mail', provider: params.provider };
  },
});
