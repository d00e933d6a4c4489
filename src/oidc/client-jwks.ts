import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import { badRequest } from '../errors/app-error.js';

/**
 * A client's public keys for `private_key_jwt` (RFC 7523 §2.2, OpenID Connect Core §9): a JWK Set of public
 * signing keys only. A private member (`d`, the RSA CRT members, a symmetric `k`) is refused rather than
 * dropped: whoever sent it has leaked the key and should make a new one.
 */
export const CLIENT_JWKS_MAX_KEYS = 5;
export const CLIENT_JWKS_MAX_BYTES = 16_384;
/** The assertion algorithms offered (discovery's `token_endpoint_auth_signing_alg_values_supported`). */
export const CLIENT_ASSERTION_ALGS = ['RS256', 'PS256', 'ES256'] as const;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const MIN_RSA_BITS = 2048;

const b64u = z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');
const common = {
  kid: z.string().min(1).max(200).optional(),
  use: z.literal('sig').optional(),
  key_ops: z.array(z.literal('verify')).max(1).optional(),
};
const rsaKey = z.strictObject({ ...common, kty: z.literal('RSA'), alg: z.enum(['RS256', 'PS256']).optional(), n: b64u, e: b64u });
const ecKey = z.strictObject({ ...common, kty: z.literal('EC'), alg: z.literal('ES256').optional(), crv: z.literal('P-256'), x: b64u, y: b64u });
export type ClientJwk = z.infer<typeof rsaKey> | z.infer<typeof ecKey>;

/** Why a key cannot verify client assertions, or null. */
function keyProblem(key: Record<string, unknown>): string | null {
  const leaked = PRIVATE_MEMBERS.filter((m) => m in key);
  if (leaked.length) return `holds private key material (${leaked.join(', ')}): register the public key only, and make a new key pair`;
  if (key.kty !== 'RSA' && key.kty !== 'EC') return 'must be an RSA or an EC (P-256) public key';
  return null;
}

export const clientJwksSchema = z
  .strictObject({ keys: z.array(z.record(z.string(), z.unknown())).min(1).max(CLIENT_JWKS_MAX_KEYS) })
  .superRefine((set, ctx) => {
    if (JSON.stringify(set).length > CLIENT_JWKS_MAX_BYTES) {
      ctx.addIssue({ code: 'custom', message: `is larger than ${CLIENT_JWKS_MAX_BYTES} bytes` });
      return;
    }
    const kids = new Set<string>();
    set.keys.forEach((key, i) => {
      const at = { code: 'custom' as const, path: ['keys', i] };
      const problem = keyProblem(key);
      if (problem) return ctx.addIssue({ ...at, message: problem });
      const parsed = (key.kty === 'RSA' ? rsaKey : ecKey).safeParse(key);
      if (!parsed.success) {
        const first = parsed.error.issues[0];
        return ctx.addIssue({ ...at, message: `${first.path.join('.') || 'key'}: ${first.message}` });
      }
      try {
        const pub = createPublicKey({ key: parsed.data as import('node:crypto').JsonWebKey, format: 'jwk' });
        const bits = pub.asymmetricKeyDetails?.modulusLength;
        if (key.kty === 'RSA' && (bits ?? 0) < MIN_RSA_BITS) return ctx.addIssue({ ...at, message: `is an RSA key of ${bits} bits: at least ${MIN_RSA_BITS}` });
      } catch {
        return ctx.addIssue({ ...at, message: 'is not a valid public key' });
      }
      if (typeof key.kid === 'string') {
        if (kids.has(key.kid)) ctx.addIssue({ ...at, message: `repeats kid ${key.kid}` });
        kids.add(key.kid);
      }
    });
  })
  .transform((set) => ({ keys: set.keys as ClientJwk[] }));
export type ClientJwks = z.output<typeof clientJwksSchema>;

/** `jwks` goes with private_key_jwt, and private_key_jwt needs it. */
export function checkKeys(method: string | undefined, jwks: ClientJwks | null | undefined): void {
  if (method === 'private_key_jwt' && !jwks) throw badRequest('A private_key_jwt client needs its public keys (jwks, a JWK Set; the CLI reads --jwks-file)');
  if (method !== 'private_key_jwt' && jwks) throw badRequest('jwks is for a private_key_jwt client only (token_endpoint_auth_method: private_key_jwt)');
}
