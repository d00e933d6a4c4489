import { readFileSync } from 'node:fs';
import { importPKCS8, SignJWT } from 'jose';
import { str, truthy } from '../provider.js';
import { webClientId, type ProviderSettings } from '../settings.js';
import { oidcProvider } from './oidc.js';

const keyCache = new Map<string, ReturnType<typeof importPKCS8>>();

/** A setting Apple's client secret needs; check() reports a missing one at start, so here it is a bug. */
function required(s: ProviderSettings, key: 'team_id' | 'key_id'): string {
  const v = s[key];
  if (!v) throw new Error(`apple: ${key} is required`);
  return v;
}

function privateKeyPem(s: ProviderSettings): string {
  if (s.private_key) return s.private_key;
  if (!s.private_key_file) throw new Error('apple: private_key_file is required');
  return readFileSync(s.private_key_file, 'utf8');
}

/** The name Apple posts once, on the first sign-in, as the form field `user` ({"name":{"firstName","lastName"}}). */
function postedName(userJson: string | undefined): { first: string | null; last: string | null } {
  try {
    const u = userJson ? (JSON.parse(userJson) as { name?: { firstName?: unknown; lastName?: unknown } }) : null;
    return { first: str(u?.name?.firstName), last: str(u?.name?.lastName) };
  } catch {
    return { first: null, last: null };
  }
}

/**
 * Sign in with Apple: the callback is a form POST (response_mode=form_post), the client secret is an
 * ES256 JWT signed with the team's key, the id_token carries the SHA-256 of our nonce and spells its
 * booleans as strings.
 */
export const apple = oidcProvider({
  id: 'apple',
  name: 'Apple',
  defaultEndpoints: {
    authorization: 'https://appleid.apple.com/auth/authorize',
    token: 'https://appleid.apple.com/auth/token',
    jwks: 'https://appleid.apple.com/auth/keys',
    issuer: 'https://appleid.apple.com',
  },
  defaultScopes: ['name', 'email'],
  clientAuth: 'post',
  hashNonce: true,
  authParams: () => ({ response_mode: 'form_post' }),
  profile: (c, extras) => {
    const posted = postedName(extras.userJson);
    return {
      id: String(c.sub),
      email: str(c.email),
      emailVerified: truthy(c.email_verified),
      name: posted.first,
      lastName: posted.last,
      picture: null,
    };
  },
  async makeClientSecret(s, issuer) {
    const pem = privateKeyPem(s);
    let key = keyCache.get(pem);
    if (!key) {
      key = importPKCS8(pem, 'ES256');
      keyCache.set(pem, key);
    }
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: required(s, 'key_id') })
      .setIssuer(required(s, 'team_id'))
      .setSubject(webClientId(s))
      .setAudience(issuer)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(await key);
  },
  check(s) {
    const problems: string[] = [];
    if (!s.team_id) problems.push('apple: team_id is required');
    if (!s.key_id) problems.push('apple: key_id is required');
    if (!s.private_key && !s.private_key_file) problems.push('apple: private_key_file is required');
    else {
      try {
        const pem = privateKeyPem(s);
        if (!/BEGIN PRIVATE KEY/.test(pem)) problems.push('apple: the private key must be a PKCS#8 PEM (BEGIN PRIVATE KEY)');
      } catch (err) {
        problems.push(`apple: cannot read private_key_file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
    return problems;
  },
});
