import { badRequest } from '../../errors/app-error.js';
import { defineRoute } from '../define-route.js';
import { ownSessionParams } from '../schemas/own-sessions.schemas.js';
import { sessionRow } from './admin-users.routes.js';

/**
 * A user's own sessions over the API, as the account page shows and ends them (src/web/pages/account.ts),
 * through the same user-service calls: the same `session.revoked` events (by: user), the caches told
 * on every instance (the session service's revocation), and the OpenID tokens issued in an ended
 * session ended with it (docs/oidc.md). Ids are the sessions' public ids, never their tokens.
 */

export const listOwnSessions = defineRoute({
  method: 'get',
  path: '/auth/user/me/sessions',
  summary: 'List your active sessions',
  auth: 'session',
  async handler({ auth, app }) {
    const now = Date.now();
    const sessions = (await app.services.users.listSessions(auth.user.id))
      .map((s) => ({ ...sessionRow(s, now), current: s.id === auth.session.id }))
      // Active ones only: not a pending second step, not expired (the account page's list).
      .filter((s) => s.status === 'active')
      .sort((a, b) => Number(b.current) - Number(a.current) || Date.parse(b.lastUsedAt ?? '') - Date.parse(a.lastUsedAt ?? ''));
    return { success: true, data: { sessions, sessionCount: sessions.length } };
  },
});

/** Ends one of the caller's other sessions; 404 for any id that is not one of theirs (whether it exists elsewhere or not). */
export const revokeOwnSession = defineRoute({
  method: 'delete',
  path: '/auth/user/me/sessions/:id',
  summary: 'Sign out one of your sessions',
  auth: 'session',
  params: ownSessionParams,
  async handler({ auth, params, app }) {
    if (params.id === auth.session.id) {
      const message = 'This is the session making the request: end it with POST /auth/logout';
      throw badRequest(message, [{ field: 'id', message }]);
    }
    await app.services.users.revokeOwnSession(auth.user, params.id, auth.session.id);
    return { success: true, message: 'Session revoked' };
  },
});

/** "Sign out everywhere else": every session of the caller's but the one asking. */
export const revokeOtherOwnSessions = defineRoute({
  method: 'post',
  path: '/auth/user/me/sessions/revoke-others',
  summary: 'Sign out every other session of yours',
  auth: 'session',
  async handler({ auth, app }) {
    const revoked = await app.services.users.revokeOtherSessions(auth.user, auth.session.id);
    return { success: true, message: revoked ? 'Other sessions revoked' : 'No other session', data: { revoked } };
  },
});
