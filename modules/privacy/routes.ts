import { z } from 'zod';
import { AppError, defineRoute, forbidden, notFound, type ModuleContext, type UserRecord } from '../../src/module-api.js';
import { assertCanErase, eraseAll, exportAll, history, privacyUpdateSchema, readPrivacy, regionsOf, updatePrivacy } from './service.js';

const MODULE = 'privacy';
const ADMINS = { roles: ['admin', 'superadmin'] as const };
const userParams = z.object({ user_id: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a user id') });
const page = z.object({
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});
const confirm = z.literal(true, 'confirm must be true');

async function liveUser(ctx: ModuleContext, id: string): Promise<UserRecord> {
  const user = await ctx.users.find(id);
  if (!user) throw notFound('User not found');
  return user;
}

export const read = defineRoute({
  method: 'get',
  path: '/auth/user/me/privacy',
  summary: 'Your privacy and consent settings',
  auth: 'session',
  module: MODULE,
  handler: async ({ ctx, auth }) => ({ success: true, data: { ...(await readPrivacy(ctx, auth.user.id)), allowed_regions: regionsOf(ctx) } }),
});

export const update = defineRoute({
  method: 'put',
  path: '/auth/user/me/privacy',
  summary: 'Update your privacy and consent settings',
  auth: 'session',
  module: MODULE,
  body: privacyUpdateSchema,
  async handler({ ctx, auth, body }) {
    const state = await updatePrivacy(ctx, auth.user.id, body, { actor: 'self', actorId: auth.user.id });
    return { success: true, message: 'Privacy settings updated', data: state };
  },
});

export const consentHistory = defineRoute({
  method: 'get',
  path: '/auth/user/me/privacy/history',
  summary: 'History of your consent changes',
  auth: 'session',
  module: MODULE,
  query: page,
  async handler({ ctx, auth, query }) {
    const { events, total } = await history(ctx, auth.user.id, query.page, query.limit);
    return { success: true, data: { events, pagination: { page: query.page, limit: query.limit, total, pages: Math.ceil(total / query.limit) } } };
  },
});

export const exportMine = defineRoute({
  method: 'get',
  path: '/auth/user/me/privacy/export',
  summary: 'Export your personal data',
  auth: 'session',
  module: MODULE,
  async handler({ ctx, auth, res }) {
    const data = await exportAll(ctx, auth.user.id, { actor: 'self', actorId: auth.user.id });
    res.setHeader('Content-Disposition', `attachment; filename="gatehouse-export-${auth.user.id}.json"`);
    return { success: true, data };
  },
});

export const deleteMine = defineRoute({
  method: 'post',
  path: '/auth/user/me/privacy/delete',
  summary: 'Delete your account and personal data',
  auth: 'session',
  module: MODULE,
  // A password is checked here: the login limit keeps guessing slow.
  rateLimit: 'login',
  body: z.strictObject({ confirm, password: z.string().max(1024).optional() }),
  async handler({ ctx, auth, body, res }) {
    const user = await liveUser(ctx, auth.user.id);
    await assertCanErase(ctx, user, body.password);
    const result = await eraseAll(ctx, user, { actor: 'self', actorId: user.id });
    ctx.clearSessionCookie(res);
    return { success: true, message: 'Account and personal data deleted', data: result };
  },
});

/** An admin may act on users below superadmin; a superadmin on anyone. */
function assertMayActOn(actor: UserRecord, target: UserRecord): void {
  if (target.user_type === 'superadmin' && actor.user_type !== 'superadmin') throw forbidden('Only a superadmin may do this for a superadmin');
}

export const adminExport = defineRoute({
  method: 'get',
  path: '/auth/admin/users/:user_id/privacy/export',
  summary: "Export a user's personal data (admin)",
  auth: ADMINS,
  module: MODULE,
  rateLimit: 'admin',
  params: userParams,
  async handler({ ctx, auth, params }) {
    const target = await liveUser(ctx, params.user_id);
    assertMayActOn(auth.user, target);
    const data = await exportAll(ctx, target.id, { actor: 'admin', actorId: auth.user.id });
    return { success: true, data };
  },
});

export const adminDelete = defineRoute({
  method: 'post',
  path: '/auth/admin/users/:user_id/privacy/delete',
  summary: "Erase a user's account and personal data (admin)",
  auth: ADMINS,
  module: MODULE,
  rateLimit: 'admin',
  params: userParams,
  body: z.strictObject({ confirm }),
  async handler({ ctx, auth, params }) {
    const target = await liveUser(ctx, params.user_id);
    assertMayActOn(auth.user, target);
    if (target.id === auth.user.id) throw new AppError(400, 'VALIDATION_ERROR', 'Use POST /auth/user/me/privacy/delete to delete your own account');
    const result = await eraseAll(ctx, target, { actor: 'admin', actorId: auth.user.id });
    return { success: true, message: 'Account and personal data deleted', data: result };
  },
});

export const routes = [read, update, consentHistory, exportMine, deleteMine, adminExport, adminDelete];
