import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { z } from 'zod';
import { defineRoute, emailAddress, perSession } from '../../src/module-api.js';
import { loginOptions, signInWithPasskey } from './login.js';
import { listPasskeys, removePasskey, renamePasskey } from './manage.js';
import { registerPasskey, registrationOptions } from './register.js';

const MODULE_ID = 'passkeys';
const BASE = '/auth/passkeys';
/** The module's `passkeys` class (declared in index.ts), per session when there is one, else per address. */
const passkeyLimit = perSession('module:passkeys:passkeys');

// The WebAuthn response is checked by @simplewebauthn/server; here only its outline and size.
const credential = z.record(z.string(), z.unknown()).refine((v) => JSON.stringify(v).length <= 64_000, 'is too large');
const name = z.string().trim().min(1).max(100);
const idParam = z.object({ id: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an id') });

export const registerOptions = defineRoute({
  method: 'post',
  path: `${BASE}/register/options`,
  auth: 'session',
  module: MODULE_ID,
  rateLimit: passkeyLimit,
  body: z.object({}).strict().optional(),
  handler: async ({ ctx, auth }) => ({ success: true, options: await registrationOptions(ctx, auth.user) }),
});

export const registerVerify = defineRoute({
  method: 'post',
  path: `${BASE}/register/verify`,
  auth: 'session',
  module: MODULE_ID,
  rateLimit: passkeyLimit,
  body: z.object({ credential, name: name.optional() }),
  handler: async ({ ctx, auth, body }) => ({
    success: true,
    passkey: await registerPasskey(ctx, auth.user, body.credential as unknown as RegistrationResponseJSON, body.name),
  }),
});

export const list = defineRoute({
  method: 'get',
  path: BASE,
  auth: 'session',
  module: MODULE_ID,
  handler: async ({ ctx, auth }) => ({ success: true, passkeys: await listPasskeys(ctx, auth.user.id) }),
});

export const rename = defineRoute({
  method: 'patch',
  path: `${BASE}/:id`,
  auth: 'session',
  module: MODULE_ID,
  params: idParam,
  body: z.object({ name }),
  handler: async ({ ctx, auth, params, body }) => ({ success: true, passkey: await renamePasskey(ctx, auth.user.id, params.id, body.name) }),
});

export const remove = defineRoute({
  method: 'delete',
  path: `${BASE}/:id`,
  auth: 'session',
  module: MODULE_ID,
  params: idParam,
  async handler({ ctx, auth, params }) {
    await removePasskey(ctx, auth.user, auth.session, params.id);
    return { success: true, message: 'Passkey removed' };
  },
});

export const signInOptions = defineRoute({
  method: 'post',
  path: `${BASE}/login/options`,
  auth: 'public',
  module: MODULE_ID,
  rateLimit: passkeyLimit,
  // The address is accepted (clients send it) and never looked up: see loginOptions.
  body: z.object({ email: emailAddress.optional() }).optional(),
  handler: async ({ ctx }) => ({ success: true, options: await loginOptions(ctx) }),
});

export const signInVerify = defineRoute({
  method: 'post',
  path: `${BASE}/login/verify`,
  auth: 'public',
  module: MODULE_ID,
  rateLimit: passkeyLimit,
  body: z.object({ credential }),
  async handler({ ctx, req, res, body }) {
    const r = await signInWithPasskey(ctx, body.credential as unknown as AuthenticationResponseJSON, ctx.signInClient(req));
    return ctx.signInAnswer(res, r);
  },
});

export const routes = [registerOptions, registerVerify, list, rename, remove, signInOptions, signInVerify];
