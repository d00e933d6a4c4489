import { SocialCodes, socialError } from '../errors.js';
import { bearer, callProvider } from '../provider-http.js';
import { splitName, str, type ProviderProfile, type ProviderRuntime } from '../provider.js';
import { webClientId } from '../settings.js';
import { oauthProvider } from './oauth.js';

interface GitHubUser {
  id?: number | string;
  login?: string;
  name?: string | null;
  email?: string | null;
  avatar_url?: string | null;
}
interface GitHubEmail {
  email?: string;
  primary?: boolean;
  verified?: boolean;
}

const headers = (token: string) => ({ ...bearer(token), Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28' });

/** The profile from /user, and the email from /user/emails: the primary one, verified or not (GitHub says which). */
async function readProfile(p: ProviderRuntime, token: string): Promise<ProviderProfile> {
  const user = await callProvider<GitHubUser>(p, p.url('userinfo'), { headers: headers(token) });
  if (user.id === undefined || user.id === null) throw socialError(401, SocialCodes.INVALID_TOKEN, 'GitHub answered without a user id');
  const emails = await callProvider<GitHubEmail[] | Record<string, unknown>>(p, p.url('emails'), { headers: headers(token) });
  const primary = Array.isArray(emails) ? emails.find((e) => e.primary && typeof e.email === 'string') : undefined;
  const { first, last } = splitName(str(user.name));
  return {
    id: String(user.id),
    email: str(primary?.email),
    emailVerified: primary?.verified === true,
    name: first ?? str(user.login),
    lastName: last,
    picture: str(user.avatar_url),
  };
}

export const github = oauthProvider({
  id: 'github',
  name: 'GitHub',
  defaultEndpoints: {
    authorization: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
    userinfo: 'https://api.github.com/user',
    emails: 'https://api.github.com/user/emails',
    token_check: 'https://api.github.com/applications/{client_id}/token',
  },
  requiredEndpoints: ['authorization', 'token', 'userinfo', 'emails', 'token_check'],
  defaultScopes: ['read:user', 'user:email'],
  clientAuth: 'basic',
  readProfile,
  /** GitHub's "check a token", called with our app's credentials, answers 404 for a token of another app. */
  async tokenOwner(p, token) {
    const clientId = webClientId(p.settings);
    const check = await callProvider<{ app?: { client_id?: string }; user?: { id?: number | string } }>(
      p,
      p.url('token_check').replace('{client_id}', encodeURIComponent(clientId)),
      {
        method: 'POST',
        headers: {
          Authorization: `Basic ${Buffer.from(`${clientId}:${p.settings.client_secret ?? ''}`).toString('base64')}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify({ access_token: token }),
        rejectStatuses: [404, 422],
      },
    );
    return { appId: str(check.app?.client_id), userId: str(check.user?.id) };
  },
});
