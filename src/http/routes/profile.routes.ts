import { unauthorized } from '../../errors/app-error.js';
import { defineRoute, type RouteDef } from '../define-route.js';
import { validationRead } from '../middleware/rate-limit-classes.js';
import { profileUpdateBody } from '../schemas/profile.schemas.js';
import { isPending, pendingShape, sessionFields } from './auth-responses.js';
import { activeAnswers } from './session.routes.js';

/**
 * Current user, login-compatible. Both the bridge secret and a session are required; a pending
 * two-factor session is answered (with the pending shape), so the session is checked here.
 */
export const userMe = defineRoute({
  method: 'get',
  path: '/auth/user/me',
  summary: 'Your profile',
  auth: 'bridge',
  rateLimit: validationRead,
  async handler({ auth, app }) {
    if (!auth.token) throw unauthorized();
    const { session, user } = await app.services.sessions.validate(auth.token, { allowPending: true });
    // Pending too: the spec's shape for this route always carries sessionId and expiresAt.
    if (isPending(session)) return { ...(await pendingShape(app, user, auth.token)), ...sessionFields(auth.token, session) };
    return activeAnswers.userMe(app, { session, user }, auth.token);
  },
});

const updateProfile: Omit<RouteDef<Record<string, unknown>, unknown, unknown, 'session'>, 'method' | 'path'> = {
  auth: 'session',
  body: profileUpdateBody,
  async handler({ body, auth, app }) {
    const user = await app.services.users.updateProfile(auth.user, body);
    return { success: true, message: 'Profile updated', data: { user: app.services.users.toPublic(user) } };
  },
};

export const updateUserMe = defineRoute({ ...updateProfile, method: 'put', path: '/auth/user/me', summary: 'Update your profile' });
export const updateProfileLegacy = defineRoute({
  ...updateProfile,
  method: 'put',
  path: '/auth/profile',
  summary: 'Update your profile (legacy alias of PUT /auth/user/me)',
});
export const updateProfileLegacyPost = defineRoute({
  ...updateProfile,
  method: 'post',
  path: '/auth/profile',
  summary: 'Update your profile (legacy POST alias of PUT /auth/user/me)',
});
