import { z } from 'zod';

// Bounds only: the address is checked by the one email rule in the service (so a missing or bad one is
// named `new_email` whatever spelling was sent), the password by the password check.
const addressInput = z.string().max(1000);
const passwordInput = z.string().max(1000);

/** POST /auth/user/me/email: the new address and the current password, snake_case or camelCase. */
export const emailChangeBody = z.object({
  new_email: addressInput.optional(),
  newEmail: addressInput.optional(),
  password: passwordInput.optional(),
  current_password: passwordInput.optional(),
  currentPassword: passwordInput.optional(),
});
export type EmailChangeBody = z.output<typeof emailChangeBody>;

/** POST /auth/user/me/email/confirm: the link's token. */
export const emailChangeConfirmBody = z.object({ token: z.string().min(1).max(200) });

/** GET /auth/user/me/email/confirm: the link itself (a missing token is answered as an invalid one). */
export const emailChangeConfirmQuery = z.object({ token: z.string().max(200).optional() });
