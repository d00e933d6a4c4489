import { requireSecret, str, truthy } from '../provider.js';
import { oidcProvider } from './oidc.js';

export const google = oidcProvider({
  id: 'google',
  name: 'Google',
  defaultEndpoints: {
    authorization: 'https://accounts.google.com/o/oauth2/v2/auth',
    token: 'https://oauth2.googleapis.com/token',
    userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
    jwks: 'https://www.googleapis.com/oauth2/v3/certs',
    issuer: 'https://accounts.google.com',
  },
  defaultScopes: ['openid', 'email', 'profile'],
  clientAuth: 'basic',
  profile: (c) => ({
    id: String(c.sub),
    email: str(c.email),
    emailVerified: truthy(c.email_verified),
    name: str(c.given_name) ?? str(c.name),
    lastName: str(c.family_name),
    picture: str(c.picture),
  }),
  check: (s) => requireSecret(s, 'google'),
});
