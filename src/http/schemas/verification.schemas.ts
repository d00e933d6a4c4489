import { z } from 'zod';
import { emailField } from '../../services/user-fields.js';

/** GET /auth/token/verify: the link's token (a missing one is answered as an invalid token). */
export const verifyEmailQuery = z.object({ token: z.string().max(200).optional() });

/** POST /auth/resend-verification: the one email rule (user-fields.ts), trimmed and lower-cased. */
export const resendVerificationBody = z.object({ email: emailField });
