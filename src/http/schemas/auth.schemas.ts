import { z } from 'zod';
import { registerPublicSchema } from '../../services/user-fields.js';
import { USER_ALIASES, jsonObject, withAliases } from './aliases.js';

const optString = (max: number) => z.string().max(max).optional();

/** `email` or a user name (`userName`, `user_name`, `username`); an `email` without @ is a user name. */
export const loginBody = z
  .object({
    email: optString(254),
    userName: optString(254),
    user_name: optString(254),
    username: optString(254),
    password: z.string('password is required').min(1, 'password is required').max(1024),
  })
  .transform((b, ctx) => {
    const identifier = [b.email, b.userName, b.user_name, b.username].find((v) => typeof v === 'string' && v.trim());
    if (!identifier) {
      ctx.addIssue({ code: 'custom', path: ['email'], message: 'email or user name is required' });
      return z.NEVER;
    }
    return { identifier: identifier.trim(), password: b.password };
  });

/** Public registration: the auth service's own schema (user-fields.ts), camel or snake spellings. */
export const registerPublicBody = withAliases(USER_ALIASES, registerPublicSchema);
export type RegisterPublicBody = z.output<typeof registerPublicBody>;

/** POST /auth/register: public registration or an admin's create, decided by the session; each branch parses its own schema. */
export const registerBody = jsonObject;

export const sessionIdBody = z.object({
  sessionId: optString(200),
  session_id: optString(200),
});
export type SessionIdBody = z.output<typeof sessionIdBody>;

export const VALIDATION_MODES = ['disabled', 'standard', 'advanced', 'strict'] as const;
export type ValidationMode = (typeof VALIDATION_MODES)[number];

/** Bridge validation: where the session id may arrive, and the optional client context to check. */
export const bridgeValidateBody = z.object({
  session_id: optString(200),
  sessionId: optString(200),
  ip: optString(64),
  ip_address: optString(64),
  user_agent: optString(2048),
  device_id: optString(200),
  device_fingerprint: optString(200),
  validation_mode: z
    .string()
    .trim()
    .toLowerCase()
    .transform((v) => (v === 'none' ? 'disabled' : v))
    .pipe(z.enum(VALIDATION_MODES, `validation_mode must be one of ${VALIDATION_MODES.join(', ')}`))
    .optional(),
});
export type BridgeValidateBody = z.output<typeof bridgeValidateBody>;
