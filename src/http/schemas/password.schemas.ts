import { z } from 'zod';
import { emailField } from '../../services/user-fields.js';

const tokenField = z.string().min(1).max(200);
// Length is checked by the password policy (with its own message); this only bounds the input.
const passwordField = z.string().max(1000);

/** POST /auth/password-reset/request: the one email rule, and an optional link base (allow-listed later). */
export const resetRequestBody = z.object({ email: emailField, resetUrl: z.string().max(2000).optional(), reset_url: z.string().max(2000).optional() });

/** /auth/password-reset/validate: the token in the body, or in the path (legacy). */
export const resetTokenInput = z.object({ token: tokenField });

/** /complete and its legacy name: the new password under any of the names clients use. */
export const resetCompleteBody = z.object({
  token: tokenField,
  password: passwordField.optional(),
  new_password: passwordField.optional(),
  newPassword: passwordField.optional(),
});
export type ResetCompleteBody = z.output<typeof resetCompleteBody>;

export const changeOwnPasswordBody = z.object({
  current_password: passwordField.optional(),
  currentPassword: passwordField.optional(),
  new_password: passwordField.optional(),
  newPassword: passwordField.optional(),
});

export const changePasswordByAdminBody = z.object({
  user_id: z.string().min(1).max(64).optional(),
  userId: z.string().min(1).max(64).optional(),
  new_password: passwordField.optional(),
  newPassword: passwordField.optional(),
  password: passwordField.optional(),
});
