import type { JWTPayload } from 'jose';
import { verifyIdToken } from '../id-token.js';
import { invalidToken } from '../errors.js';
import type { CallbackExtras, ProviderProfile, ProviderRuntime, SocialProvider } from '../provider.js';
import { audiences } from '../settings.js';

type OidcSpec = Omit<SocialProvider, 'oidc' | 'fromCode' | 'fromIdToken' | 'requiredEndpoints'> & {
  /** Maps verified claims (and the callback's extras) to a profile. */
  profile(claims: JWTPayload, extras: CallbackExtras): ProviderProfile;
};

/** An OpenID Connect provider: the code flow's id_token and the mobile id_token are verified the same way. */
export function oidcProvider(spec: OidcSpec): SocialProvider {
  const { profile: mapped, ...rest } = spec;
  // The upstream's `amr` rides with every OpenID provider's profile: the sign-in seam keeps its RFC 8176 values.
  const profile = (claims: JWTPayload, extras: CallbackExtras): ProviderProfile => {
    const amr = Array.isArray(claims.amr) ? claims.amr.filter((v): v is string => typeof v === 'string') : undefined;
    return { ...mapped(claims, extras), ...(amr?.length ? { amr } : {}) };
  };
  const verify = (p: ProviderRuntime, idToken: string, nonce: string | undefined) =>
    verifyIdToken(idToken, {
      provider: p.id,
      jwks: p.url('jwks'),
      timeoutMs: p.timeoutMs,
      issuer: p.url('issuer'),
      audiences: audiences(p.settings),
      nonce,
      hashNonce: spec.hashNonce,
    });
  return {
    ...rest,
    oidc: true,
    requiredEndpoints: ['authorization', 'token', 'jwks', 'issuer'],
    async fromCode(p, tokens, nonce, extras) {
      const idToken = 'id_token' in tokens.data && typeof tokens.data.id_token === 'string' ? tokens.data.id_token : null;
      if (!idToken) throw invalidToken(`${spec.name} answered without an id_token`);
      return profile(await verify(p, idToken, nonce), extras);
    },
    async fromIdToken(p, idToken, nonce) {
      return profile(await verify(p, idToken, nonce), {});
    },
  };
}
