import { z } from 'zod';
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

const nullableString = z.union([z.string(), z.null()]).optional();

/** Public registration: a user_type in the body is dropped (public sign-ups are customers). */
export const registerPublicBody = withAliases(
  USER_ALIASES,
  z.object({
    email: z.string('email is required'),
    password: z.string('password is required'),
    name: nullableString,
    last_name: nullableString,
    user_name: nullableString,
    phone: nullableString,
    lang: nullableString,
  }),
);

export type RegisterPublicBody = z.output<typeof registerPublicBody>;

/** Admin creation bodies (camel or snake); the user service validates the fields strictly. */
export const adminCreateBody = withAliases(USER_ALIASES, jsonObject);

export const sessionIdBody = z.object({
  sessionId: optString(200),
  session_id: optString(200),
});

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
