import { createHash } from 'node:crypto';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { invalidToken, providerUnavailable } from './errors.js';

const jwksSets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

/** One key set per URL, fetched when first needed and cached by jose (refetched on an unknown kid). */
function jwksFor(url: string, timeoutMs: number) {
  const key = `${timeoutMs} ${url}`;
  let set = jwksSets.get(key);
  if (!set) {
    set = createRemoteJWKSet(new URL(url), { timeoutDuration: timeoutMs, cooldownDuration: 30_000 });
    jwksSets.set(key, set);
  }
  return set;
}

export const sha256Hex = (v: string) => createHash('sha256').update(v).digest('hex');

export interface IdTokenRules {
  provider: string;
  jwks: string;
  timeoutMs: number;
  /** The exact issuer, or a template with `{tenantid}` filled from the token's `tid` (Microsoft). */
  issuer: string;
  audiences: string[];
  /** When given, the token's nonce must match it (after `hashNonce`, Apple). */
  nonce?: string;
  hashNonce?: boolean;
}

const TOKEN_ERRORS = new Set([
  'ERR_JWT_EXPIRED',
  'ERR_JWT_CLAIM_VALIDATION_FAILED',
  'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
  'ERR_JWS_INVALID',
  'ERR_JWT_INVALID',
  'ERR_JWKS_NO_MATCHING_KEY',
  'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
  'ERR_JOSE_ALG_NOT_ALLOWED',
  'ERR_JOSE_NOT_SUPPORTED',
]);

/**
 * Verifies an id_token: signature against the provider's JWKS (asymmetric algorithms only), audience,
 * expiry (60 s leeway), issuer (tenant rule), and nonce. A bad token is 401; a provider whose key set
 * cannot be fetched is 503.
 */
export async function verifyIdToken(token: string, rules: IdTokenRules): Promise<JWTPayload> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, jwksFor(rules.jwks, rules.timeoutMs), {
      audience: rules.audiences,
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'],
      clockTolerance: 60,
      requiredClaims: ['sub', 'exp', 'iat', 'iss'],
    }));
  } catch (err) {
    if (err instanceof errors.JOSEError && TOKEN_ERRORS.has(err.code)) throw invalidToken(`Invalid ${rules.provider} id_token`);
    throw providerUnavailable(rules.provider);
  }
  const expectedIssuer = rules.issuer.includes('{tenantid}')
    ? typeof payload.tid === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(payload.tid)
      ? rules.issuer.replace('{tenantid}', payload.tid)
      : null
    : rules.issuer;
  if (!expectedIssuer || payload.iss !== expectedIssuer) throw invalidToken(`Invalid ${rules.provider} id_token issuer`);
  if (rules.nonce !== undefined) {
    const expected = rules.hashNonce ? sha256Hex(rules.nonce) : rules.nonce;
    if (typeof payload.nonce !== 'string' || payload.nonce !== expected) throw invalidToken(`Invalid ${rules.provider} id_token nonce`);
  }
  return payload;
}
