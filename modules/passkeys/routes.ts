import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { z } from 'zod';
import { defineRoute, emailAddress, perSession } from '../../src/module-api.js';
import { loginOptions, signInWithPasskey } from './login.js';
import { adminList, adminRemove, listPasskeys, removalOptions, removePasskey, renamePasskey } from './manage.js';
import { registerPasskey, registrationOptions } from './register.js';

const MODULE_ID = 'passkeys';
const BASE = '/auth/passkeys';
/** The module's `passkeys` class (declared in index.ts), per session when there is one, else per address. */
const passkeyLimit = perSession('module:passkeys:passkeys');

// The WebAuthn response is checked by @simplewebauthn/server; here only its outline and size.
const credential = z.record(z.string(), z.unknown()).refine((v) => JSON.stringify(v).length <= 64_000, 'is too large');
/**
 * A WebAuthn response as the verifier takes it. The schema checks only its outline and size;
 * @simplewebauthn/server's verify* functions check every field and refuse a malformed response.
 */
const webauthnResponse = <T extends RegistrationResponseJSON | AuthenticationResponseJSON>(v: Record<string, unknown>): T => v as T;
const name = z.string().trim().min(1).max(100);
const idParam = z.object({ id: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an id') });

export const registerOptions = defineRoute({
  method: 'post',
  path: `${BASE}/register/options`,
  summary: 'Start adding a passkey (WebAuthn creation options)',
  auth: 'session',
  module: MODULE_ID,
  rateLimit: passkeyLimit,
  body: z.object({}).strict().optional(),
  handler: async ({ ctx, auth }) => ({ success: true, options: await registrationOptions(ctx, auth.user) }),
});

export const registerVerify = defineRoute({
  method: 'post',
  path: `${BASE}/register/verify`,
  summary: 'Finish adding a passkey',
  auth: 'session',
  module: MODULE_ID,
  rateLimit: passkeyLimit,
  body: z.object({ credential, name: name.optional() }),
  handler: async ({ ctx, auth, body, req }) => ({
    success: true,
    passkey: await registerPasskey(ctx, auth.user, webauthnResponse<RegistrationResponseJSON>(body.credential), body.name, ctx.signInClient(req).userAgent),
  }),
});

export const list = defineRoute({
  method: 'get',
  path: BASE,
  summary: 'List your passkeys',
  auth: 'session',
  module: MODULE_ID,
  handler: async ({ ctx, auth }) => ({ success: true, passkeys: await listPasskeys(ctx, auth.user.id) }),
});

export const rename = defineRoute({
  method: 'patch',
  path: `${BASE}/:id`,
  summary: 'Rename one of your passkeys',
  auth: 'session',
  module: MODULE_ID,
  params: idParam,
  body: z.object({ name }),
  handler: async ({ ctx, auth, params, body }) => ({ success: true, passkey: await renamePasskey(ctx, auth.user.id, params.id, body.name) }),
});

/** Options for proving a passkey before removing it without a recent sign-in: limited to that passkey. */
export const removeOptions = defineRoute({
  method: 'post',
  path: `${BASE}/:id/remove/options`,
  summary: 'Options to prove a passkey before removing it',
  auth: 'session',
  module: MODULE_ID,
  rateLimit: passkeyLimit,
  params: idParam,
  body: z.object({}).strict().optional(),
  handler: async ({ ctx, auth, params }) => ({ success: true, options: await removalOptions(ctx, auth.user.id, params.id) }),
});

export const remove = defineRoute({
  method: 'delete',
  path: `${BASE}/:id`,
  summary: 'Remove one of your passkeys',
  auth: 'session',
  module: MODULE_ID,
  rateLimit: passkeyLimit,
  params: idParam,
  // With `credential` (an assertion of this passkey over its remove options) no recent sign-in is needed.
  body: z.object({ credential: credential.optional() }).optional(),
  async handler({ ctx, auth, params, body, req }) {
    const proof = body?.credential ? { credential: webauthnResponse<AuthenticationResponseJSON>(body.credential), client: ctx.signInClient(req) } : undefined;
    await removePasskey(ctx, auth.user, auth.session, params.id, proof);
    return { success: true, message: 'Passkey removed' };
  },
});

export const signInOptions = defineRoute({
  method: 'post',
  path: `${BASE}/login/options`,
  summary: 'Start a passkey sign-in (WebAuthn request options)',
  auth: 'public',
  module: MODULE_ID,
  rateLimit: passkeyLimit,
  // The address is never looked up; it binds the sign-in to its account: see loginOptions.
  body: z.object({ email: emailAddress.optional() }).optional(),
  handler: async ({ ctx, body }) => ({ success: true, options: await loginOptions(ctx, body?.email) }),
});

export const signInVerify = defineRoute({
  method: 'post',
  path: `${BASE}/login/verify`,
  summary: 'Finish a passkey sign-in',
  auth: 'public',
  module: MODULE_ID,
  rateLimit: passkeyLimit,
  body: z.object({ credential }),
  async handler({ ctx, req, res, body }) {
    const r = await signInWithPasskey(ctx, webauthnResponse<AuthenticationResponseJSON>(body.credential), ctx.signInClient(req));
    return ctx.signInAnswer(res, r);
  },
});

const userParams = z.object({ user_id: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an id') });

/** An admin sees a user's passkeys (the same view the user has). */
export const adminListRoute = defineRoute({
  method: 'get',
  path: '/auth/admin/users/:user_id/passkeys',
  summary: "List a user's passkeys (admin)",
  auth: { roles: ['admin', 'superadmin'] },
  module: MODULE_ID,
  params: userParams,
  handler: async ({ ctx, params }) => ({ success: true, user_id: params.user_id, passkeys: await adminList(ctx, params.user_id) }),
});

/** An admin removes a user's passkey: audited with the admin as actor, the user mailed. */
export const adminRemoveRoute = defineRoute({
  method: 'delete',
  path: '/auth/admin/users/:user_id/passkeys/:id',
  summary: "Remove a user's passkey (admin)",
  auth: { roles: ['admin', 'superadmin'] },
  module: MODULE_ID,
  rateLimit: 'admin',
  params: userParams.extend(idParam.shape),
  async handler({ ctx, auth, params }) {
    await adminRemove(ctx, auth.user, params.user_id, params.id);
    return { success: true, message: 'Passkey removed; the user was told by mail' };
  },
});

export const routes = [registerOptions, registerVerify, list, rename, removeOptions, remove, signInOptions, signInVerify, adminListRoute, adminRemoveRoute];
