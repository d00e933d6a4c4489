import type { Request, Response } from 'express';
import type { AppContext } from '../../app-context.js';
import type { SignInResult } from '../../services/sign-in.js';
import type { Config } from '../../config/schema.js';
import { forbidden, isAppError } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import { isClientClosed } from '../../services/security/passwords.js';
import { clearSessionCookie, setSessionCookie } from '../cookies.js';
import { defineRoute, parseWith, requireBridge, type AuthMode, type HandlerArgs } from '../define-route.js';
import { assertSameOrigin } from '../middleware/csrf.js';
import { consumeClassOrThrow, consumeLoginAttempt } from '../middleware/rate-limit.js';
import { registrationOrAdmin, validationRead } from '../middleware/rate-limit-classes.js';
import { giveBackClass } from '../middleware/rate-limit-request.js';
import { beforeCredentials } from '../middleware/credential-limits.js';
import { adminCreateBody } from '../schemas/admin-users.schemas.js';
import { loginBody, registerBody, registerPublicBody, type RegisterPublicBody } from '../schemas/auth.schemas.js';
import { answerAbandoned, clientInfo, isPending, pendingShape, sessionFields, signInAnswer } from './auth-responses.js';
import { activeAnswers } from './session.routes.js';

/**
 * A password sign-in as POST /auth/login does it: the per-account budgets on top of the `login` class
 * (counted by the gate), the auth service, the metrics. The hosted /login page (src/web) calls this
 * too, so a page never signs anyone in another way.
 */
export async function passwordLogin(app: AppContext, req: Request, res: Response, identifier: string, password: string): Promise<SignInResult> {
  let r;
  try {
    // Per-account budgets on top of the per-IP class; a check the database failed gives the attempt's hits back (docs/rate-limits.md).
    const attempt = await consumeLoginAttempt(app, req, res, identifier);
    r = await attempt.check((throttleKey) =>
      app.services.auth.login(identifier, password, { ...clientInfo(req), throttleKey, abandoned: answerAbandoned(res) }),
    );
  } catch (err) {
    // "Email not verified" is told only once the password is right: that check passed too.
    if (isAppError(err) && err.code === Codes.EMAIL_NOT_VERIFIED) await giveBackClass(app, req, 'login');
    const limited = isAppError(err) && err.status === 429;
    const abandoned = isClientClosed(err);
    app.metrics.login(limited ? 'limited' : abandoned ? 'abandoned' : 'failure');
    if (limited) res.setHeader('Retry-After', String(Math.max(1, Number(err.extra?.retry_after) || 1)));
    throw err;
  }
  // The password was right (signed in, or a second factor to go, which has budgets of its own): the
  // address's hit in `login` goes back, so an office behind one address is not locked out by its own
  // sign-ins. The per-account budgets and the backoff stay as counted.
  await giveBackClass(app, req, 'login');
  app.metrics.login(r.status === 'pending' ? 'pending_second_factor' : 'success');
  return r;
}

export const login = defineRoute({
  method: 'post',
  path: '/auth/login',
  summary: 'Sign in with email and password',
  auth: 'public',
  rateLimit: 'login',
  body: loginBody,
  async handler({ req, res, body, app }) {
    return signInAnswer(app, res, await passwordLogin(app, req, res, body.identifier, body.password));
  },
});

export const logout = defineRoute({
  method: 'post',
  path: '/auth/logout',
  summary: 'Sign out: end the current session',
  auth: 'session-or-pending',
  async handler({ res, auth, app }) {
    await app.services.auth.logout(auth.token, auth);
    clearSessionCookie(res, app.config);
    return { success: true, message: 'Logged out successfully' };
  },
});

/** Public sign-up: a customer, a verification mail when required, a session when not. */
async function publicRegistration({ req, res, body, app }: Pick<HandlerArgs<RegisterPublicBody, unknown, unknown>, 'req' | 'res' | 'body' | 'app'>) {
  const { user, session } = await app.services.auth.registerPublic(body, clientInfo(req));
  const pub = app.services.users.toPublic(user);
  if (!session) {
    return {
      success: true,
      message: 'Registration successful. Please check your email to verify your account.',
      data: { user: { ...pub, requiresVerification: true } },
    };
  }
  setSessionCookie(res, app.config, session.token, new Date(session.session.expires_at));
  return {
    success: true,
    message: 'Registration successful',
    data: { user: pub, ...sessionFields(session.token, session.session) },
  };
}

const publicAuth = (config: Config): AuthMode => (config.registrationRequiresBridgeSecret ? 'bridge' : 'public');

export const registerPublic = defineRoute({
  method: 'post',
  path: '/auth/register/public',
  summary: 'Register a new account (self-service sign-up)',
  auth: publicAuth,
  rateLimit: 'registration',
  body: registerPublicBody,
  handler: publicRegistration,
});

/** The session of a request when it is live; null for none, an unknown or an expired one. */
async function liveSession(app: AppContext, token: string | null) {
  if (!token) return null;
  try {
    return await app.services.sessions.validate(token);
  } catch (err) {
    if (isAppError(err) && err.status === 401) return null;
    throw err;
  }
}

/**
 * The original client registers here without a session (`@pubflow/core` register()): that is public
 * registration, with its rules, limits, mail and customer-only type. With a session it is the admin
 * create under its older name. `data` is the user itself plus a `user` copy (both are read).
 */
export const register = defineRoute({
  method: 'post',
  path: '/auth/register',
  summary: 'Register a new account (alias of /auth/register/public)',
  // Decided per request below: a missing or dead session is the public path, a live one must be an admin's.
  auth: 'public',
  rateLimit: registrationOrAdmin,
  body: registerBody,
  async handler({ req, res, body, auth, app }) {
    const live = await liveSession(app, auth.token);
    if (!live) {
      await consumeClassOrThrow(app, req, res, 'registration');
      if (publicAuth(app.config) === 'bridge') requireBridge(auth.bridge, app);
      const answer = await publicRegistration({ req, res, body: beforeCredentials(() => parseWith(registerPublicBody, body)), app });
      return { ...answer, data: { ...answer.data.user, ...answer.data } };
    }
    if (auth.tokenSource === 'cookie') assertSameOrigin(req, auth, app.config);
    if (!['admin', 'superadmin'].includes(live.user.user_type)) throw forbidden();
    await consumeClassOrThrow(app, req, res, 'admin');
    const user = await app.services.users.createParsed(parseWith(adminCreateBody, body), { actor: live.user, via: 'admin', verified: true });
    const pub = app.services.users.toPublic(user);
    return { success: true, message: 'User created', data: { ...pub, user: pub } };
  },
});

/** Legacy current user: `data.user`, or the pending two-factor shape. */
export const me = defineRoute({
  method: 'get',
  path: '/auth/me',
  summary: 'The signed-in user (short form of GET /auth/user/me)',
  auth: 'session-or-pending',
  rateLimit: validationRead,
  async handler({ auth, app }) {
    if (isPending(auth.session)) return pendingShape(app, auth.user, auth.token);
    return activeAnswers.me(app, auth);
  },
});
