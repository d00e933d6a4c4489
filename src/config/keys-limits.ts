import { key } from './key-def.js';
import { bool, rateLimit } from './readers.js';

/** Configuration keys (schema.ts CONFIG_KEYS, in this order): rate limits ("attempts/window"; docs/rate-limits.md). */
export const LIMIT_KEYS = {
  // Rate limits ("attempts/window")
  RATE_LIMIT_DEFAULT: key('rateLimitDefault', 'limits', rateLimit, 'Default limit of routes without a class.', { default: '300/5m' }),
  RATE_LIMIT_LOGIN: key('rateLimitLogin', 'limits', rateLimit, 'Login.', { default: '5/15m' }),
  RATE_LIMIT_LOGIN_ACCOUNT: key(
    'rateLimitLoginAccount',
    'limits',
    rateLimit.optional(),
    'Login attempts on one account from all sources together. Default: 10 x the Login attempts over the Login window.',
  ),
  RATE_LIMIT_REGISTRATION: key('rateLimitRegistration', 'limits', rateLimit, 'Registration.', { default: '3/1h' }),
  RATE_LIMIT_TOKEN_LOGIN: key('rateLimitTokenLogin', 'limits', rateLimit, 'Token login (also resend-verification, password-reset request).', {
    default: '10/10m',
  }),
  RATE_LIMIT_TOKEN_VALIDATE: key('rateLimitTokenValidate', 'limits', rateLimit, 'Token validation.', { default: '20/5m' }),
  RATE_LIMIT_EMAIL_CHANGE: key(
    'rateLimitEmailChange',
    'limits',
    rateLimit,
    'Email change requests (each mails a confirmation link), counted per session; the password check also counts in Login.',
    { default: '5/1h' },
  ),
  RATE_LIMIT_SOCIAL_LOGIN: key('rateLimitSocialLogin', 'limits', rateLimit, 'Social login.', { default: '10/15m' }),
  RATE_LIMIT_SOCIAL_API: key('rateLimitSocialApi', 'limits', rateLimit, 'Social API.', { default: '20/10m' }),
  RATE_LIMIT_CACHE_INVALIDATION: key('rateLimitCacheInvalidation', 'limits', rateLimit, 'Cache invalidation.', { default: '10/5m' }),
  RATE_LIMIT_ADMIN: key('rateLimitAdmin', 'limits', rateLimit, 'Admin actions.', { default: '50/10m' }),
  RATE_LIMIT_BRIDGE: key(
    'rateLimitBridge',
    'limits',
    rateLimit,
    'Validation reads (bridge validate, validation, current user) sent with the right X-Bridge-Secret, counted per secret.',
    // What one instance answers (35,000 a second measured, docs/rate-limits.md): a backend is never throttled below it.
    { default: '10000000/5m' },
  ),
  RATE_LIMIT_BRIDGE_INVALID: key(
    'rateLimitBridgeInvalid',
    'limits',
    rateLimit,
    'Validation reads sent with a wrong X-Bridge-Secret, counted per address (guessing).',
    { default: '10/15m' },
  ),
  RATE_LIMIT_SESSION: key('rateLimitSession', 'limits', rateLimit, 'Validation and current-user reads with a valid session, counted per session.', {
    default: '600/5m',
  }),
  RATE_LIMIT_OIDC_AUTHORIZATION: key(
    'rateLimitOidcAuthorization',
    'limits',
    rateLimit,
    'OpenID Connect authorization requests (/oidc/auth and the sign-in hand-off), per address.',
    {
      default: '60/1m',
    },
  ),
  RATE_LIMIT_OIDC_TOKEN: key('rateLimitOidcToken', 'limits', rateLimit, 'OpenID Connect token, introspection and revocation requests, per address.', {
    default: '300/5m',
  }),
  RATE_LIMIT_OIDC_CLIENT_AUTH: key(
    'rateLimitOidcClientAuth',
    'limits',
    rateLimit,
    'Failed client authentications per OpenID Connect client; when spent, the client is refused (even with the right secret) until the window ends.',
    { default: '20/10m' },
  ),
  RATE_LIMITS_ENABLED: key('rateLimitsEnabled', 'limits', bool, 'Enforce rate limits (switch off only for benchmarks).', { default: true }),
};
