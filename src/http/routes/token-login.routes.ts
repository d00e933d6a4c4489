import type { Request, Response } from 'express';
import type { AppContext } from '../../app-context.js';
import type { Config } from '../../config/schema.js';
import type { TokenLoginProof } from '../../services/token-login-service.js';
import { setSessionCookie } from '../cookies.js';
import { clientInfo, loginShape, pendingShape, sessionFields } from './auth-responses.js';
import { defineRoute, type AuthMode } from '../define-route.js';
import { tokenLoginProof, tokenLoginRequestBody, type TokenLoginProofInput } from '../schemas/token-login.schemas.js';

/** Bridge-only when TOKEN_LOGIN_REQUIRES_BRIDGE_SECRET is on (the Flowless default for backends). */
const tokenLoginAuth = (config: Config): AuthMode => (config.tokenLoginRequiresBridgeSecret ? 'bridge' : 'public');

export const requestTokenLogin = defineRoute({
  method: 'post',
  path: '/auth/token/login',
  summary: 'Send a one-time sign-in link or code (passwordless)',
  auth: tokenLoginAuth,
  rateLimit: 'token-login',
  body: tokenLoginRequestBody,
  async handler({ app, body }) {
    const r = await app.services.tokenLogin.request(body);
    return { success: true, message: r.message, token_id: r.token_id };
  },
});

function toProof(...sources: TokenLoginProofInput[]): TokenLoginProof {
  const pick = <K extends keyof TokenLoginProofInput>(k: K) => sources.map((s) => s[k]).find((v) => v !== undefined && v !== '');
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
  summary: 'Sign in with a one-time token (passwordless)',
  auth: tokenLoginAuth,
  rateLimit: 'token-validate',
  body: tokenLoginProof,
  query: tokenLoginProof,
  handler: ({ app, req, res, body, query }) => signIn(app, req, res, toProof(body, query)),
});

export const validateTokenLoginGet = defineRoute({
  method: 'get',
  path: '/auth/token/validate',
  summary: 'Sign in with a one-time token from a link (passwordless)',
  auth: tokenLoginAuth,
  rateLimit: 'token-validate',
  query: tokenLoginProof,
  handler: ({ app, req, res, query }) => signIn(app, req, res, toProof(query)),
});
