import { z } from 'zod';
import {
  AppError,
  badRequest,
  defineRoute,
  forbidden,
  notFound,
  perSession,
  type ModuleContext,
  type SessionRecord,
  type UserRecord,
} from '../../src/module-api.js';
import { listDevices, TRUSTED_DEVICE_COOKIE, trustDevice } from './devices.js';
import { startExtra, verifyExtra } from './extra.js';
import { store } from './store.js';
import { KINDS, settings } from './settings.js';
import { backupCodesFields, listMethods, removeMethod, resetUser, start, toggle, verifyCode, type Caller } from './service.js';
import { pendingSetup, regenerateBackupCodes, setup } from './setup.js';

const MODULE_ID = 'two-factor';
const BASE = '/auth/two_factor';
/** How the module names its step in the 'auth.login' hooks of a session it finishes. */
const SIGN_IN_METHOD = 'two-factor';

/** The module's `two-factor` rate-limit class (RATE_LIMIT_TWO_FACTOR, declared in index.ts), counted per session when the request carries a live one (pending included), else per address. */
const twoFactorLimit = perSession('module:two-factor:two-factor');

/** The login answer's fields: `{success, user, sessionId, session_id, expiresAt, expires_at}` (the contract's spellings). */
function loginFields(ctx: ModuleContext, user: UserRecord, token: string, session: SessionRecord) {
  const exp = new Date(session.expires_at).toISOString();
  return { success: true, user: ctx.users.toPublic(user), sessionId: token, session_id: token, expiresAt: exp, expires_at: exp };
}

const ID_RE = /^[A-Za-z0-9-]{1,64}$/;
const id = z.string().regex(ID_RE, 'must be an id');
const text = (max: number) => z.string().trim().max(max);
// A number loses its leading zeros in JSON: 12345 is the code 012345.
const code = z
  .union([z.string().max(64), z.number().int().nonnegative().max(99_999_999)])
  .transform((v) => (typeof v === 'number' ? String(v).padStart(6, '0') : v));
// Empty strings mean absent: clients send the proof fields as "" when they have no code to give.
const absentIfEmpty = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' || v === null ? undefined : v), schema.optional());
const proofFields = { verification_code: absentIfEmpty(code), verification_method_id: absentIfEmpty(id) };
const kindParam = z.object({ method: z.enum(KINDS, `must be one of ${KINDS.join(', ')}`) });
const NOT_SENT = 'codes are sent for email and sms; totp codes come from the app, backup codes from the list';
// email and sms here; any other type is asked of the module that provides it (extra.ts), else refused as before.
const sendParam = z.object({ method: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, NOT_SENT) });
// A WebAuthn response (checked by the providing module): only its outline and size here.
const credential = z.record(z.string(), z.unknown()).refine((v) => JSON.stringify(v).length <= 64_000, 'is too large');

const caller = (ctx: ModuleContext, auth: { user: Caller['user']; session: Caller['session'] }): Caller => ({ ctx, user: auth.user, session: auth.session });

export const system = defineRoute({
  method: 'get',
  path: `${BASE}/system`,
  summary: 'Whether two-factor is available, and its methods',
  auth: 'public',
  module: MODULE_ID,
  handler: ({ ctx }) => ({ success: true, global_two_factor_enabled: true, enabled: true, available_methods: settings(ctx).methods }),
});

export const methods = defineRoute({
  method: 'get',
  path: `${BASE}/methods`,
  summary: 'List your two-factor methods',
  auth: 'session-or-pending',
  module: MODULE_ID,
  async handler({ ctx, auth }) {
    return { success: true, ...(await listMethods(caller(ctx, auth))) };
  },
});

export const setupMethod = defineRoute({
  method: 'post',
  path: `${BASE}/:method/setup`,
  summary: 'Set up a two-factor method (TOTP app, email, SMS, backup codes)',
  auth: 'session',
  module: MODULE_ID,
  rateLimit: twoFactorLimit,
  params: kindParam,
  body: z.object({ identifier: text(254).optional(), email: text(254).optional(), phone: text(32).optional(), ...proofFields }),
  handler: ({ ctx, auth, params, body }) => setup(caller(ctx, auth), params.method, body),
});

/** The user's unconfirmed setup of a kind, again (an authenticator app's key and QR code while it is pending): a reloaded page goes on with it. */
export const pendingSetupOf = defineRoute({
  method: 'get',
  path: `${BASE}/:method/setup`,
  summary: 'Show an unconfirmed method setup again (an authenticator key for an hour)',
  auth: 'session',
  module: MODULE_ID,
  params: kindParam,
  handler: ({ ctx, auth, params }) => pendingSetup(caller(ctx, auth), params.method),
});

export const startMethod = defineRoute({
  method: 'post',
  path: `${BASE}/:method/start`,
  summary: 'Send a two-factor code by the given method',
  auth: 'session-or-pending',
  module: MODULE_ID,
  rateLimit: twoFactorLimit,
  params: sendParam,
  body: z.object({ method_id: id.optional(), action: z.enum(['login', 'setup', 'remove', 'verify', 'toggle', 'disable', 'manage']).optional() }),
  async handler({ ctx, auth, params, body }) {
    const { method } = params;
    if (method === 'email' || method === 'sms') return start(caller(ctx, auth), method, body);
    const extra = auth.session.status !== 'active' ? await startExtra(ctx, auth.user, auth.session, method) : null;
    if (!extra) throw badRequest('Validation failed', [{ field: 'method', message: NOT_SENT }]);
    return extra;
  },
});

export const verify = defineRoute({
  method: 'post',
  path: `${BASE}/verify`,
  summary: 'Verify a two-factor code (finishes sign-in or confirms a method)',
  auth: 'session-or-pending',
  module: MODULE_ID,
  rateLimit: twoFactorLimit,
  body: z
    .object({
      code: code.optional(),
      // A passkey's (another module's method's) proof instead of a code.
      credential: credential.optional(),
      method_id: id.optional(),
      method: z.union([z.enum(KINDS), z.string().regex(/^[a-z][a-z0-9_]{0,31}$/)]).optional(),
      action: z.enum(['login', 'setup', 'remove']).optional(),
      trust_device: z.boolean('trust_device must be true or false').optional(),
    })
    .refine((b) => b.code !== undefined || b.credential !== undefined, { message: 'code is required', path: ['code'] })
    .refine((b) => b.credential !== undefined || b.method === undefined || (KINDS as readonly string[]).includes(b.method), {
      message: `must be one of ${KINDS.join(', ')}`,
      path: ['method'],
    }),
  async handler({ ctx, auth, body, req, res }) {
    const c = caller(ctx, auth);
    let action: 'login' | 'setup' | 'remove';
    let base: Record<string, unknown>;
    let method: Awaited<ReturnType<typeof verifyCode>>['method'] | null = null;
    let setupOutcome: Awaited<ReturnType<typeof verifyCode>>['setup'];
    if (body.credential) {
      // Another module's method (a passkey): only to finish a sign-in, from a pending session.
      if (auth.session.status === 'active') throw badRequest('This session is signed in already', undefined, 'ALREADY_VERIFIED');
      if (body.action && body.action !== 'login') throw forbidden('A pending session can only finish signing in', 'TWO_FACTOR_REQUIRED');
      if (!body.method_id && !body.method) throw badRequest('method_id or method is required', [{ field: 'method_id', message: 'required' }]);
      const extra = await verifyExtra(
        ctx,
        { user: c.user, session: c.session, client: ctx.signInClient(req) },
        body as { credential: Record<string, unknown> },
      );
      action = 'login';
      base = { success: true, verified: true, method: extra.type, method_id: extra.id };
    } else {
      // The schema asks for a code or a credential; this is the branch without a credential.
      if (body.code === undefined) throw badRequest('code is required', [{ field: 'code', message: 'required' }]);
      const v = await verifyCode(c, { ...body, code: body.code, method: body.method as (typeof KINDS)[number] | undefined });
      action = v.action;
      method = v.method;
      setupOutcome = v.setup;
      base = { success: true, verified: true, method: method.kind, method_id: method.id };
    }
    if (action === 'setup') {
      // Confirming the first method turns 2FA on; its first backup codes are in this answer, once.
      const user = (await ctx.users.find(c.user.id)) ?? c.user;
      const codes = setupOutcome?.backupCodes;
      return {
        ...base,
        session_activated: false,
        status: 'active',
        message: setupOutcome?.turnedOn
          ? `Two-factor method verified; two-factor authentication is now on${codes ? '. Store the backup codes now, they are shown once' : ''}`
          : 'Two-factor method verified',
        user: ctx.users.toPublic(user),
        two_factor_enabled: Boolean(user.two_factor),
        two_factor_turned_on: Boolean(setupOutcome?.turnedOn),
        ...backupCodesFields(codes ?? null),
      };
    }
    if (action === 'remove') {
      // Only verifyCode answers 'remove', and it names the method.
      if (!method) throw new Error('two-factor: a removal without its method');
      return { ...(await removeMethod(c, method.id, {}, method)), ...base, session_activated: false };
    }
    const session = await ctx.sessions.activate(c.session.id, { user: c.user, method: SIGN_IN_METHOD });
    if (!session) throw new AppError(401, 'INVALID_SESSION', 'Invalid session');
    // The same id the client holds is now a full session; the cookie gets its new lifetime.
    ctx.cookies.setSession(res, auth.token, new Date(session.expires_at));
    let device = {};
    if (body.trust_device) {
      const t = await trustDevice(ctx, c.user.id, req.get('user-agent') ?? null);
      ctx.cookies.set(res, TRUSTED_DEVICE_COOKIE, t.token, t.expiresAt);
      device = { trusted_device_token: t.token, trusted_device_expires_at: t.expiresAt.toISOString() };
    }
    const user = (await ctx.users.find(c.user.id)) ?? c.user;
    return {
      ...loginFields(ctx, user, auth.token, session),
      ...base,
      session_activated: true,
      requires_2fa: false,
      two_factor_verified: true,
      message: 'Two-factor verification successful',
      ...device,
    };
  },
});

export const toggleTwoFactor = defineRoute({
  method: 'post',
  path: `${BASE}/toggle`,
  summary: 'Turn two-factor sign-in on or off',
  auth: 'session',
  module: MODULE_ID,
  rateLimit: twoFactorLimit,
  body: z
    .object({ two_factor_enabled: z.boolean('must be true or false').optional(), enabled: z.boolean('must be true or false').optional(), ...proofFields })
    .refine((b) => b.two_factor_enabled !== undefined || b.enabled !== undefined, {
      message: 'two_factor_enabled (true or false) is required',
      path: ['two_factor_enabled'],
    }),
  handler: ({ ctx, auth, body }) => {
    const enabled = body.two_factor_enabled ?? body.enabled;
    if (enabled === undefined) throw badRequest('two_factor_enabled (true or false) is required', [{ field: 'two_factor_enabled', message: 'required' }]);
    return toggle(caller(ctx, auth), enabled, body);
  },
});

export const regenerate = defineRoute({
  method: 'post',
  path: `${BASE}/backup_codes/regenerate`,
  summary: 'Replace your two-factor backup codes',
  auth: 'session',
  module: MODULE_ID,
  rateLimit: twoFactorLimit,
  body: z.object(proofFields),
  handler: ({ ctx, auth, body }) => regenerateBackupCodes(caller(ctx, auth), body),
});

export const trustedDevices = defineRoute({
  method: 'get',
  path: `${BASE}/trusted_devices`,
  summary: 'List devices trusted to skip the second step',
  auth: 'session',
  module: MODULE_ID,
  handler: async ({ ctx, auth }) => ({ success: true, devices: await listDevices(ctx, auth.user.id) }),
});

/** "Forget all devices": every trusted device of the user asks for the second step again. */
export const forgetDevices = defineRoute({
  method: 'post',
  path: `${BASE}/trusted_devices/forget`,
  summary: 'Forget every trusted device',
  auth: 'session',
  module: MODULE_ID,
  async handler({ ctx, auth, res }) {
    const n = await store.forgetDevices(ctx, auth.user.id);
    ctx.cookies.clear(res, TRUSTED_DEVICE_COOKIE);
    return { success: true, forgotten: n, message: 'Trusted devices forgotten' };
  },
});

export const deleteMethod = defineRoute({
  method: 'delete',
  path: `${BASE}/:id`,
  summary: 'Remove one of your two-factor methods',
  auth: 'session',
  module: MODULE_ID,
  rateLimit: twoFactorLimit,
  params: z.object({ id }),
  body: z.object(proofFields),
  handler: ({ ctx, auth, params, body }) => removeMethod(caller(ctx, auth), params.id, body),
});

export const adminReset = defineRoute({
  method: 'post',
  path: '/auth/admin/users/:user_id/two-factor/reset',
  summary: "Reset a user's two-factor methods (admin)",
  auth: { roles: ['admin', 'superadmin'] },
  module: MODULE_ID,
  rateLimit: 'admin',
  params: z.object({ user_id: id }),
  async handler({ ctx, auth, params }) {
    const target = await ctx.users.find(params.user_id);
    if (!target) throw notFound('User not found');
    const data = await resetUser(ctx, target, auth.user);
    return { success: true, message: 'Two-factor authentication reset; the user was told by mail', data };
  },
});

export const routes = [
  system,
  methods,
  regenerate,
  trustedDevices,
  forgetDevices,
  setupMethod,
  pendingSetupOf,
  startMethod,
  verify,
  toggleTwoFactor,
  deleteMethod,
  adminReset,
];
