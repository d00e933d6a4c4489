import type { UserRecord } from '../data/repositories/user-repository.js';
import type { OidcAdapter } from './adapter.js';
import type { ClientStore } from './clients.js';
import { DEVICE_CODE_TTL, DEVICE_PATH } from './device-flow.js';
import { RESOURCE_TTL_MAX } from './resources.js';

/** What the provider's configuration (provider.ts) is made of: its paths, limit classes, claims, lifetimes, and where clients come from. */

/** Where the provider answers; discovery is at the issuer's root (`/.well-known/openid-configuration`). */
export const OIDC_PREFIX = '/oidc';
export const OIDC_ROUTES = {
  authorization: `${OIDC_PREFIX}/auth`,
  token: `${OIDC_PREFIX}/token`,
  userinfo: `${OIDC_PREFIX}/userinfo`,
  jwks: `${OIDC_PREFIX}/jwks`,
  revocation: `${OIDC_PREFIX}/token/revocation`,
  introspection: `${OIDC_PREFIX}/token/introspection`,
  end_session: `${OIDC_PREFIX}/session/end`,
  pushed_authorization_request: `${OIDC_PREFIX}/request`,
  // The verification URI is the hosted page (src/web/pages/device.ts), outside /oidc: the provider never answers it.
  code_verification: DEVICE_PATH,
  device_authorization: `${OIDC_PREFIX}/device/auth`,
  backchannel_authentication: `${OIDC_PREFIX}/backchannel`,
  challenge: `${OIDC_PREFIX}/challenge`,
} as const;
export const INTERACTION_PATH = `${OIDC_PREFIX}/interaction`;

/** The provider's endpoints that count in their own rate-limit classes (the rate-limit gate reads this; the rest count in default). */
export const OIDC_LIMIT_CLASSES = new Map<string, 'oidc-authorization' | 'oidc-token'>([
  [`GET ${OIDC_ROUTES.authorization}`, 'oidc-authorization'],
  [`POST ${OIDC_ROUTES.authorization}`, 'oidc-authorization'],
  [`POST ${OIDC_ROUTES.token}`, 'oidc-token'],
  [`POST ${OIDC_ROUTES.device_authorization}`, 'oidc-token'],
  [`POST ${OIDC_ROUTES.introspection}`, 'oidc-token'],
  [`POST ${OIDC_ROUTES.revocation}`, 'oidc-token'],
]);

/** The scopes the provider knows. */
export const OIDC_SCOPE_NAMES = ['openid', 'offline_access', 'profile', 'email', 'phone', 'roles'];

/** Scopes and the claims each releases (issue 25); `roles` releases the role as a list and `user_type`. */
export const OIDC_CLAIMS = {
  auth_time: null,
  sid: null,
  // How the user signed in goes with every ID token (a client asking "were two factors used?" needs no `claims` parameter).
  openid: ['sub', 'acr', 'amr'],
  profile: ['name', 'given_name', 'family_name', 'preferred_username', 'picture', 'locale', 'zoneinfo', 'updated_at'],
  email: ['email', 'email_verified'],
  phone: ['phone_number'],
  roles: ['roles', 'user_type'],
};

/** `acr` values: one factor, or two (with what a sign-in proved, src/services/sign-in-amr.ts: the /device page reads them too). */
export { ACR_1FA, ACR_2FA } from '../services/sign-in-amr.js';

/** Lifetimes in seconds; the authorization code's comes from OIDC_CODE_TTL_SECONDS (`codeTtl` below). */
export const TTL = {
  AccessToken: 3600,
  AuthorizationCode: 60,
  IdToken: 3600,
  ClientCredentials: 600,
  Interaction: 3600,
  Session: 14 * 24 * 3600,
  Grant: 365 * 24 * 3600,
  RefreshToken: 30 * 24 * 3600,
  DeviceCode: DEVICE_CODE_TTL,
};
/** The longest life of a token signed with a key (a registered API's access tokens may live a day): how long a retired key stays published. */
export const MAX_SIGNED_TTL = Math.max(TTL.AccessToken, TTL.IdToken, TTL.ClientCredentials, RESOURCE_TTL_MAX);

const epoch = (d: Date | string) => Math.floor(new Date(d).getTime() / 1000);
/** A token's lifetime: its registered API's own when it has one, else `fallback` seconds. */
export const apiTtlOr = (fallback: number) => (_ctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) =>
  token.resourceServer?.accessTokenTTL ?? fallback;

/** The standard claims of a user (the spec's User object mapped to OpenID Connect's names). */
export function claimsOf(user: UserRecord): Record<string, unknown> {
  const fullName = user.display_name || [user.name, user.last_name].filter(Boolean).join(' ') || undefined;
  return {
    sub: user.id,
    email: user.email,
    email_verified: Boolean(user.is_verified),
    name: fullName,
    given_name: user.name ?? undefined,
    family_name: user.last_name ?? undefined,
    preferred_username: user.user_name ?? undefined,
    picture: user.picture ?? undefined,
    locale: user.lang ?? undefined,
    zoneinfo: user.tmz ?? undefined,
    phone_number: user.phone ?? undefined,
    updated_at: user.updated_at ? epoch(user.updated_at) : undefined,
    roles: [user.user_type],
    user_type: user.user_type,
  };
}

/** Clients come from oidc_clients, read-only here: the client store is their one writer. */
export function clientAdapter(clients: Pick<ClientStore, 'findWithSecret'>): OidcAdapter {
  const none = async () => undefined;
  return {
    upsert: async () => undefined,
    async find(id) {
      const c = typeof id === 'string' && id.length <= 64 ? await clients.findWithSecret(id) : null;
      if (!c) return undefined;
      return {
        client_id: c.client_id,
        client_name: c.name,
        // The stored hash stands where oidc-provider keeps a secret; compareClientSecret (below) checks against it.
        ...(c.public || !c.secret_hash ? {} : { client_secret: c.secret_hash }),
        // A private_key_jwt client's public keys: oidc-provider verifies its assertions against them.
        ...(c.jwks ? { jwks: c.jwks } : {}),
        redirect_uris: c.redirect_uris,
        post_logout_redirect_uris: c.post_logout_redirect_uris,
        grant_types: c.grant_types,
        response_types: ['code'],
        token_endpoint_auth_method: c.token_endpoint_auth_method,
        id_token_signed_response_alg: c.id_token_alg,
        first_party: c.first_party,
        keep_session_on_logout: c.keep_session_on_logout,
        pkce_required: c.pkce_required,
        allowed_resources: c.allowed_resources,
        // Its ID tokens carry `sid`, which its logout tokens name (includeSid needs both).
        ...(c.backchannel_logout_uri ? { backchannel_logout_uri: c.backchannel_logout_uri, backchannel_logout_session_required: true } : {}),
      };
    },
    findByUserCode: none,
    findByUid: none,
    consume: async () => true,
    destroy: async () => undefined,
    revokeByGrantId: async () => undefined,
  };
}
