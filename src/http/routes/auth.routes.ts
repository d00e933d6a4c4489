import { isAppError } from '../../errors/app-error.js';
import { clearSessionCookie, setSessionCookie } from '../cookies.js';
import { defineRoute } from '../define-route.js';
import { consumeAccountLimit, loginAttemptKey } from '../middleware/rate-limit.js';
import { adminCreateBody, loginBody, registerPublicBody } from '../schemas/auth.schemas.js';
import { clientInfo, isPending, loginShape, pendingShape, sessionFields } from './auth-responses.js';

export const login = defineRoute({
  method: 'post',
  path: '/auth/login',
  auth: 'public',
  rateLimit: 'login',
  body: loginBody,
  async handler({ req, res, body, app }) {
    // Per-account budgets on top of the per-IP class (see docs/rate-limits.md).
    await consumeAccountLimit(app, res, body.identifier);
    let r;
    try {
      r = await app.services.auth.login(body.identifier, body.password, {
        ...clientInfo(req),
        throttleKey: loginAttemptKey(req, body.identifier),
      });
    } catch (err) {
      if (isAppError(err) && err.status === 429) res.setHeader('Retry-After', String(Math.max(1, Number(err.extra?.retry_after) || 1)));
      throw err;
    }
    // A pending session gets the cookie too, so cookie-only browsers can finish the two-factor step.
    setSessionCookie(res, app.config, r.token, new Date(r.session.expires_at));
    if (r.status === 'pending') return pendingShape(app, r.user, r.token, r.methods);
    return { ...loginShape(app, r.user, r.token, r.session), message: 'Login successful' };
  },
});

export const logout = defineRoute({
  method: 'post',
  path: '/auth/logout',
  auth: 'session-or-pending',
  async handler({ res, auth, app }) {
    await app.services.auth.logout(auth.token!);
    clearSessionCookie(res, app.config);
    return { success: true, message: 'Logged out successfully' };
  },
});

export const registerPublic = defineRoute({
  method: 'post',
  path: '/auth/register/public',
  auth: (config) => (config.registrationRequiresBridgeSecret ? 'bridge' : 'public'),
  rateLimit: 'registration',
  body: registerPublicBody,
  async handler({ req, res, body, app }) {
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
  },
});

/** Admin creation under its older name; `data` is the user itself plus a `user` copy (both are read). */
export const registerByAdmin = defineRoute({
  method: 'post',
  path: '/auth/register',
  auth: { roles: ['admin', 'superadmin'] },
  rateLimit: 'admin',
  body: adminCreateBody,
  async handler({ body, auth, app }) {
    const user = await app.services.users.create(body as never, { actor: auth.user, verified: true });
    const pub = app.services.users.toPublic(user);
    return { success: true, message: 'User created', data: { ...pub, user: pub } };
  },
});

/** Legacy current user: `data.user`, or the pending two-factor shape. */
export const me = defineRoute({
  method: 'get',
  path: '/auth/me',
  auth: 'session-or-pending',
  async handler({ auth, app }) {
    if (isPending(auth.session!)) return pendingShape(app, auth.user!, auth.token!);
    return { success: true, data: { user: app.services.users.toPublic(auth.user!) } };
  },
});
