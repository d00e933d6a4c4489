import { createHmac } from 'node:crypto';
import { SocialCodes, socialError } from '../errors.js';
import { callProvider } from '../provider-http.js';
import { str, type ProviderProfile, type ProviderRuntime } from '../provider.js';
import { webClientId } from '../settings.js';
import { oauthProvider } from './oauth.js';

interface FacebookUser {
  id?: string;
  name?: string;
  first_name?: string;
  last_name?: string;
  email?: string;
  picture?: { data?: { url?: string; is_silhouette?: boolean } };
}

const FIELDS = 'id,name,first_name,last_name,email,picture.type(large)';

/** Graph API reads signed with appsecret_proof, so a leaked token alone cannot call them as our app. */
async function readProfile(p: ProviderRuntime, token: string): Promise<ProviderProfile> {
  const url = new URL(p.url('userinfo'));
  url.searchParams.set('fields', FIELDS);
  url.searchParams.set('access_token', token);
  if (p.settings.client_secret) url.searchParams.set('appsecret_proof', createHmac('sha256', p.settings.client_secret).update(token).digest('hex'));
  const u = await callProvider<FacebookUser>(p, url.toString());
  if (!str(u.id)) throw socialError(401, SocialCodes.INVALID_TOKEN, 'Facebook answered without a user id');
  const pic = u.picture?.data;
  return {
    id: String(u.id),
    email: str(u.email),
    // Facebook never says whether an address was verified: never trusted for linking.
    emailVerified: false,
    name: str(u.first_name) ?? str(u.name),
    lastName: str(u.last_name),
    picture: pic && !pic.is_silhouette ? str(pic.url) : null,
  };
}

export const facebook = oauthProvider({
  id: 'facebook',
  name: 'Facebook',
  defaultEndpoints: {
    authorization: 'https://www.facebook.com/v19.0/dialog/oauth',
    token: 'https://graph.facebook.com/v19.0/oauth/access_token',
    userinfo: 'https://graph.facebook.com/v19.0/me',
    token_check: 'https://graph.facebook.com/v19.0/debug_token',
  },
  requiredEndpoints: ['authorization', 'token', 'userinfo', 'token_check'],
  defaultScopes: ['email', 'public_profile'],
  clientAuth: 'post',
  readProfile,
  /** `debug_token`, asked with our app token, says which app a user token belongs to and whether it is valid. */
  async tokenOwner(p, token) {
    const url = new URL(p.url('token_check'));
    url.searchParams.set('input_token', token);
    url.searchParams.set('access_token', `${webClientId(p.settings)}|${p.settings.client_secret ?? ''}`);
    const r = await callProvider<{ data?: { app_id?: string; is_valid?: boolean; user_id?: string } }>(p, url.toString());
    return r.data?.is_valid ? { appId: str(r.data.app_id), userId: str(r.data.user_id) } : { appId: null, userId: null };
  },
});
