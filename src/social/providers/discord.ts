import { SocialCodes, socialError } from '../errors.js';
import { bearer, callProvider } from '../provider-http.js';
import { splitName, str, type ProviderProfile, type ProviderRuntime } from '../provider.js';
import { oauthProvider } from './oauth.js';

interface DiscordUser {
  id?: string;
  username?: string;
  global_name?: string | null;
  avatar?: string | null;
  email?: string | null;
  verified?: boolean;
}

async function readProfile(p: ProviderRuntime, token: string): Promise<ProviderProfile> {
  const u = await callProvider<DiscordUser>(p, p.url('userinfo'), { headers: bearer(token) });
  if (!str(u.id)) throw socialError(401, SocialCodes.INVALID_TOKEN, 'Discord answered without a user id');
  const { first, last } = splitName(str(u.global_name));
  return {
    id: String(u.id),
    email: str(u.email),
    emailVerified: u.verified === true,
    name: first ?? str(u.username),
    lastName: last,
    picture: u.avatar && /^[A-Za-z0-9_]+$/.test(u.avatar) ? `https://cdn.discordapp.com/avatars/${u.id}/${u.avatar}.png` : null,
  };
}

export const discord = oauthProvider({
  id: 'discord',
  name: 'Discord',
  defaultEndpoints: {
    authorization: 'https://discord.com/oauth2/authorize',
    token: 'https://discord.com/api/oauth2/token',
    userinfo: 'https://discord.com/api/users/@me',
    token_check: 'https://discord.com/api/oauth2/@me',
  },
  requiredEndpoints: ['authorization', 'token', 'userinfo', 'token_check'],
  defaultScopes: ['identify', 'email'],
  clientAuth: 'basic',
  readProfile,
  /** `/oauth2/@me` names the application a token was issued to. */
  async tokenOwner(p, token) {
    const me = await callProvider<{ application?: { id?: string }; user?: { id?: string } }>(p, p.url('token_check'), { headers: bearer(token) });
    return { appId: str(me.application?.id), userId: str(me.user?.id) };
  },
});
