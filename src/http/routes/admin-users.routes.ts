import type { SessionRecord } from '../../data/repositories/session-repository.js';
import { BadCursorError } from '../../data/repositories/user-repository.js';
import { badRequest } from '../../errors/app-error.js';
import { defineRoute, type RouteDef } from '../define-route.js';
import {
  adminCreateBody,
  adminUpdateBody,
  deleteUserBody,
  deleteUserQuery,
  listUsersQuery,
  userIdParams,
  userSessionParams,
} from '../schemas/admin-users.schemas.js';
import { iso } from './auth-responses.js';

/**
 * Admin user management. Two path families are served by the same handlers: /auth/admin/users
 * (documented) and /auth/users (what the starters call).
 */

const ADMIN = { roles: ['admin', 'superadmin'] } as const;

/** An admin route without its method and path (both path families share it); body, query and params keep their schemas' types. */
const adminRoute = <B = undefined, Q = Record<string, unknown>, P = Record<string, string>>(
  def: Omit<RouteDef<B, Q, P, typeof ADMIN>, 'method' | 'path' | 'auth' | 'rateLimit'>,
): Omit<RouteDef<B, Q, P, typeof ADMIN>, 'method' | 'path'> => ({ auth: ADMIN, rateLimit: 'admin', ...def });

/** A session as listed in admin user details (the spec's Session); the user's own list adds `current` (own-sessions.routes.ts). */
export function sessionRow(s: SessionRecord, now = Date.now()) {
  const expired = new Date(s.expires_at).getTime() <= now;
  return {
    id: s.id,
    sessionPrefix: s.session_prefix,
    ipAddress: s.ip_address,
    userAgent: s.user_agent,
    userDevice: s.user_device,
    lastUsedAt: iso(s.last_used_at),
    createdAt: iso(s.created_at),
    expiresAt: iso(s.expires_at),
    status: expired ? 'expired' : s.status === 'active' ? 'active' : 'pending',
  };
}

const list = adminRoute({
  query: listUsersQuery,
  async handler({ query, app }) {
    let page;
    try {
      page = await app.services.users.list({ ...query, exactCountLimit: app.config.adminExactCountLimit });
    } catch (err) {
      if (err instanceof BadCursorError) throw badRequest(`cursor: ${err.message}`, [{ field: 'cursor', message: err.message }]);
      throw err;
    }
    const { users, total, totalExact, nextCursor } = page;
    // total_exact false: the total is the planner's estimate (lists beyond ADMIN_EXACT_COUNT_LIMIT).
    const pagination = {
      page: query.cursor ? null : query.page,
      limit: query.limit,
      total,
      total_exact: totalExact,
      pages: Math.ceil(total / query.limit),
      hasMore: nextCursor !== null,
      next_cursor: nextCursor,
    };
    return { success: true, data: { users: users.map(app.services.users.toPublic), pagination }, meta: pagination };
  },
});

const detail = adminRoute({
  params: userIdParams,
  async handler({ params, app }) {
    const user = await app.services.users.get(params.id);
    const sessions = (await app.services.users.listSessions(user.id)).map((s) => sessionRow(s));
    return { success: true, data: { user: app.services.users.toPublic(user), sessions, sessionCount: sessions.length } };
  },
});

const create = adminRoute({
  body: adminCreateBody,
  async handler({ body, auth, app }) {
    const user = await app.services.users.createParsed(body, { actor: auth.user, via: 'admin', verified: true });
    return { success: true, message: 'User created', data: { user: app.services.users.toPublic(user) } };
  },
});

const update = adminRoute({
  params: userIdParams,
  body: adminUpdateBody,
  async handler({ params, body, auth, app }) {
    const user = await app.services.users.adminUpdateParsed(auth.user, params.id, body);
    return { success: true, message: 'User updated', data: { user: app.services.users.toPublic(user) } };
  },
});

const remove = adminRoute({
  params: userIdParams,
  body: deleteUserBody,
  query: deleteUserQuery,
  async handler({ params, body, query, auth, app }) {
    await app.services.users.softDelete(auth.user, params.id, body.reason ?? query.reason ?? null);
    return { success: true, message: 'User deleted' };
  },
});

const revokeOne = adminRoute({
  params: userSessionParams,
  async handler({ params, auth, app }) {
    await app.services.users.revokeSession(auth.user, params.id, params.sessionId);
    return { success: true, message: 'Session revoked' };
  },
});

const revokeAll = adminRoute({
  params: userIdParams,
  async handler({ params, auth, app }) {
    const revoked = await app.services.users.revokeAllSessions(auth.user, params.id);
    return { success: true, message: 'Sessions revoked', data: { revoked } };
  },
});

export const listUsers = defineRoute({ ...list, method: 'get', path: '/auth/admin/users', summary: 'List and search users (admin)' });
export const getUser = defineRoute({ ...detail, method: 'get', path: '/auth/admin/users/:id', summary: 'Get one user (admin)' });
export const createUser = defineRoute({ ...create, method: 'post', path: '/auth/admin/users', summary: 'Create a user (admin)' });
export const updateUser = defineRoute({ ...update, method: 'put', path: '/auth/admin/users/:id', summary: 'Update a user (admin)' });
export const deleteUser = defineRoute({ ...remove, method: 'delete', path: '/auth/admin/users/:id', summary: 'Delete a user (admin)' });
export const revokeSessionPost = defineRoute({
  ...revokeOne,
  method: 'post',
  path: '/auth/admin/users/:id/sessions/:sessionId/revoke',
  summary: 'Revoke one session of a user (admin)',
});
export const revokeSession = defineRoute({
  ...revokeOne,
  method: 'delete',
  path: '/auth/admin/users/:id/sessions/:sessionId',
  summary: 'Revoke one session of a user (admin, DELETE form)',
});
export const revokeAllSessions = defineRoute({
  ...revokeAll,
  method: 'delete',
  path: '/auth/admin/users/:id/sessions',
  summary: 'Revoke every session of a user (admin)',
});

export const listUsersAlias = defineRoute({ ...list, method: 'get', path: '/auth/users', summary: 'List users (alias of GET /auth/admin/users)' });
export const getUserAlias = defineRoute({ ...detail, method: 'get', path: '/auth/users/:id', summary: 'Get one user (alias of GET /auth/admin/users/{id})' });
export const createUserAlias = defineRoute({ ...create, method: 'post', path: '/auth/users', summary: 'Create a user (alias of POST /auth/admin/users)' });
export const updateUserAlias = defineRoute({
  ...update,
  method: 'put',
  path: '/auth/users/:id',
  summary: 'Update a user (alias of PUT /auth/admin/users/{id})',
});
export const deleteUserAlias = defineRoute({
  ...remove,
  method: 'delete',
  path: '/auth/users/:id',
  summary: 'Delete a user (alias of DELETE /auth/admin/users/{id})',
});
