import { requireSecret, str, truthy } from '../provider.js';
import { oidcProvider } from './oidc.js';

const base = (tenant: string) => `https://login.microsoftonline.com/${tenant}`;

/**
 * Microsoft identity platform (v2.0). With a multi-tenant authority (`common`, the default) the issuer
 * depends on the user's tenant, so it is the template `…/{tenantid}/v2.0` checked against the token's
 * `tid`. Its `email` claim is not verified unless the tenant owns the domain (`xms_edov`).
 */
export const microsoft = oidcProvider({
  id: 'microsoft',
  name: 'Microsoft',
  defaultEndpoints: {
    authorization: `${base('common')}/oauth2/v2.0/authorize`,
    token: `${base('common')}/oauth2/v2.0/token`,
    userinfo: 'https://graph.microsoft.com/oidc/userinfo',
    jwks: `${base('common')}/discovery/v2.0/keys`,
    issuer: `${base('{tenantid}')}/v2.0`,
  },
  defaultScopes: ['openid', 'email', 'profile'],
  clientAuth: 'basic',
  profile: (c) => ({
    id: String(c.sub),
    email: str(c.email) ?? str(c.preferred_username),
    emailVerified: truthy(c.xms_edov) || truthy(c.email_verified),
    name: str(c.given_name) ?? str(c.name),
    lastName: str(c.family_name),
    picture: null,
  }),
  check: (s) => requireSecret(s, 'microsoft'),
});

/** A tenant other than `common` changes the default URLs (an explicit endpoint still wins). */
export function microsoftTenantEndpoints(tenant: string) {
  const issuer = ['common', 'organizations', 'consumers'].includes(tenant) ? `${base('{tenantid}')}/v2.0` : `${base(tenant)}/v2.0`;
  return {
    authorization: `${base(tenant)}/oauth2/v2.0/authorize`,
    token: `${base(tenant)}/oauth2/v2.0/token`,
    jwks: `${base(tenant)}/discovery/v2.0/keys`,
    issuer,
  };
}
