import { SocialCodes, socialError } from '../errors.js';
import { requireSecret, type ProviderProfile, type ProviderRuntime, type SocialProvider } from '../provider.js';
import { audiences } from '../settings.js';

type OAuthSpec = Omit<SocialProvider, 'oidc' | 'fromCode' | 'fromAccessToken' | 'check'> & {
  /** The user behind an access token, from the provider's user API. */
  readProfile(p: ProviderRuntime, token: string): Promise<ProviderProfile>;
  /** Asks the provider, as our app, which app a token was issued to and for whom (null when it does not say). */
  tokenOwner(p: ProviderRuntime, token: string): Promise<{ appId: string | null; userId: string | null }>;
};

/**
 * An OAuth 2.0 provider without OpenID: read through its user API. A mobile access token is accepted
 * only once the provider has confirmed it was issued to one of our client ids, for the same user the
 * user API then names: a token minted for another app never signs anyone in.
 */
export function oauthProvider(spec: OAuthSpec): SocialProvider {
  const { readProfile, tokenOwner, ...rest } = spec;
  const notOurs = () => socialError(401, SocialCodes.TOKEN_NOT_FOR_APP, `This ${spec.name} token was not issued to this application`);
  return {
    ...rest,
    oidc: false,
    fromCode: (p, tokens) => readProfile(p, tokens.accessToken()),
    async fromAccessToken(p, token) {
      const owner = await tokenOwner(p, token);
      if (!owner.appId || !audiences(p.settings).includes(owner.appId)) throw notOurs();
      const profile = await readProfile(p, token);
      if (owner.userId !== null && owner.userId !== profile.id) throw notOurs();
      return profile;
    },
    check: (s) => requireSecret(s, spec.id),
  };
}
