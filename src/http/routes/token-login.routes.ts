import type { Request, Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import type { Config } from '../../config/schema.js';
import type { TokenLoginProof } from '../../services/token-login-service.js';
import { setSessionCookie } from '../cookies.js';
import { clientInfo, loginShape, pendingShape, sessionFields } from './auth-responses.js';
import { defineRoute, type AuthMode } from '../define-route.js';

/** Bridge-only when TOKEN_LOGIN_REQUIRES_BRIDGE_SECRET is on (the Flowless default for backends). */
const tokenLoginAuth = (config: Config): AuthMode => (config.tokenLoginRequiresBridgeSecret ? 'bridge' : 'public');

const urlField = z.string().max(2000).optional();

export const requestTokenLogin = defineRoute({
  method: 'post',
  path: '/auth/token/login',
  auth: tokenLoginAuth,
  rateLimit: 'token-login',
  body: z.object({
    identifier: z.string().trim().min(1).max(254),
    type: z.enum(['email', 'sms', 'phone']).optional(),
    redirect_url: urlField,
    redirectUrl: urlField,
  }),
  async handler({ app, body }) {
    const r = await app.services.tokenLogin.request({
      identifier: body.identifier,
      type: body.type,
      redirectUrl: body.redirect_url ?? body.redirectUrl,
    });
    return { success: true, message: r.message, token_id: r.token_id };
  },
});

// A code may arrive as a JSON number; digits are kept, leading zeros restored.
const codeField = z
  .union([z.string().max(20), z.number().int().nonnegative()])
  .transform((v) => (typeof v === 'number' ? String(v).padStart(6, '0') : v))
  .optional();

const proofFields = {
  token: z.string().max(200).optional(),
  token_id: z.string().max(64).optional(),
  tokenId: z.string().max(64).optional(),
  identifier: z.string().max(254).optional(),
  code: codeField,
};
const proofSchema = z.object(proofFields);
type ProofInput = z.infer<typeof proofSchema>;

function toProof(...sources: ProofInput[]): TokenLoginProof {
  const pick = <K extends keyof ProofInput>(k: K) => sources.map((s) => s[k]).find((v) => v !== undefined && v !== '');
  return {
    token: pick('token'),
    tokenId: pick('token_id') ?? pick('tokenId'),
    identifier: pick('identifier'),
    code: pick('code'),
  };
}

/** The login shape (snake and camel spellings), the camel user fields Flowless documents, and the token's own fields. */
async function signIn(app: AppContext, req: Request, res: Response, proof: TokenLoginProof) {
  const r = await app.services.tokenLogin.validate(proof, clientInfo(req));
  setSessionCookie(res, app.config, r.sessionToken, new Date(r.session.expires_at));
  const tokenFields = { tokenType: 'login', token_id: r.tokenId };
  if (r.status === 'pending') {
    return { ...(await pendingShape(app, r.user, r.sessionToken, r.methods)), ...sessionFields(r.sessionToken, r.session), ...tokenFields };
  }
  const shape = loginShape(app, r.user, r.sessionToken, r.session);
  const u = shape.user;
  const user = { ...u, lastName: u.last_name, userName: u.user_name, userType: u.user_type, isVerified: u.is_verified };
  return { ...shape, message: 'Token validated successfully', user, ...tokenFields };
}

export const validateTokenLogin = defineRoute({
  method: 'post',
  path: '/auth/token/validate',
  auth: tokenLoginAuth,
  rateLimit: 'token-validate',
  body: proofSchema,
  query: proofSchema,
  handler: ({ app, req, res, body, query }) => signIn(app, req, res, toProof(body, query)),
});

export const validateTokenLoginGet = defineRoute({
  method: 'get',
  path: '/auth/token/validate',
  auth: tokenLoginAuth,
  rateLimit: 'token-validate',
  query: proofSchema,
  handler: ({ app, req, res, query }) => signIn(app, req, res, toProof(query)),
});
