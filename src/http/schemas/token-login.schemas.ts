import { z } from 'zod';
import { tokenLoginRequestSchema } from '../../services/token-login-input.js';

/** POST /auth/token/login: the service's own schema (it resolves the channel and address). */
export const tokenLoginRequestBody = tokenLoginRequestSchema;

// A code may arrive as a JSON number; digits are kept, leading zeros restored.
const codeField = z
  .union([z.string().max(20), z.number().int().nonnegative()])
  .transform((v) => (typeof v === 'number' ? String(v).padStart(6, '0') : v))
  .optional();

/** /auth/token/validate: a link token, or a code with its token_id or address (body or query). */
export const tokenLoginProof = z.object({
  token: z.string().max(200).optional(),
  token_id: z.string().max(64).optional(),
  tokenId: z.string().max(64).optional(),
  identifier: z.string().max(254).optional(),
  code: codeField,
});
export type TokenLoginProofInput = z.output<typeof tokenLoginProof>;
