import { z } from 'zod';
import { key } from './key-def.js';
import { bool, duration, int, list, url } from './readers.js';
import { socialAuthSchema } from '../social/settings.js';

/** Configuration keys (schema.ts CONFIG_KEYS, in this order): sessions, accounts and their links, and social login. */
export const ACCOUNT_KEYS = {
  // Sessions and accounts
  SESSION_TTL: key('sessionTtl', 'auth', duration(3600, 30 * 86400), 'Session lifetime (1h to 30d).', { default: '7d' }),
  PENDING_SESSION_TTL: key('pendingSessionTtl', 'auth', duration(60, 3600), 'Lifetime of a session waiting for two-factor.', { default: '5m' }),
  SESSION_IDLE_TIMEOUT: key(
    'sessionIdleTimeout',
    'auth',
    duration(0, 30 * 86400).refine((s) => s === 0 || s >= 300, { message: 'must be 0 (off) or at least 5m' }),
    'A session unused this long is refused as expired (401 SESSION_EXPIRED), up to 2 minutes late: its last use is recorded once a minute. 0 (5m to 30d otherwise): no inactivity timeout, as the original.',
    { default: '0' },
  ),
  SESSION_MAX_LIFETIME: key(
    'sessionMaxLifetime',
    'auth',
    duration(3600, 365 * 86400),
    'Absolute lifetime from sign-in (1h to 365d): no refresh, second factor or password change keeps a session past it.',
    { default: '30d' },
  ),
  SESSION_OUTAGE_GRACE: key(
    'sessionOutageGrace',
    'auth',
    duration(0, 3600),
    'While the database is down, sessions (and their users) validated shortly before keep validating from memory and Redis for this long after the outage began, never past their own expiry; then 503 until it returns. 0: validation needs the database.',
    { default: '5m' },
  ),
  SESSION_COOKIE_SAMESITE: key('cookieSameSite', 'auth', z.enum(['lax', 'strict', 'none']), 'SameSite attribute of the session_id cookie.', { default: 'lax' }),
  REQUIRE_EMAIL_VERIFICATION: key(
    'requireEmailVerification',
    'auth',
    bool,
    'Refuse login (403 EMAIL_NOT_VERIFIED) until the email is verified; send verification mail on registration.',
    { default: false },
  ),
  REGISTRATION_ENABLED: key('registrationEnabled', 'auth', bool, 'Allow public registration.', { default: true }),
  REGISTRATION_REQUIRES_BRIDGE_SECRET: key('registrationRequiresBridgeSecret', 'auth', bool, 'Require X-Bridge-Secret on POST /auth/register/public.', {
    default: false,
  }),
  REGISTRATION_ENUMERATION_SAFE: key(
    'registrationEnumerationSafe',
    'auth',
    bool,
    "Answer a registration with a taken email as a new one is answered (200, check your email) and mail the address's owner instead of 400 EMAIL_TAKEN; needs REQUIRE_EMAIL_VERIFICATION=true.",
    { default: false },
  ),
  TOKEN_LOGIN_REQUIRES_BRIDGE_SECRET: key('tokenLoginRequiresBridgeSecret', 'auth', bool, 'Require X-Bridge-Secret on token login and validate.', {
    default: false,
  }),
  BRIDGE_VALIDATION_MODE: key(
    'bridgeValidationMode',
    'auth',
    // Any case: backends built on the original spell the modes in capitals (STRICT).
    z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(['disabled', 'standard', 'advanced', 'strict'], 'must be disabled, standard, advanced or strict')),
    'Least binding check of POST /auth/bridge/validate (standard: IP, advanced: + User-Agent, strict: + device); a request may ask for a stricter validation_mode, never a weaker one.',
    { default: 'disabled' },
  ),
  PICTURE_MAX_BYTES: key('pictureMaxBytes', 'auth', int(1024, 50 * 1024 * 1024), 'Largest accepted profile picture, in bytes.', { default: 5 * 1024 * 1024 }),
  RESET_TOKEN_TTL: key('resetTokenTtl', 'auth', duration(300, 7 * 86400), 'Password reset token lifetime.', { default: '1h' }),
  VERIFY_TOKEN_TTL: key('verifyTokenTtl', 'auth', duration(600, 30 * 86400), 'Email verification token lifetime.', { default: '2d' }),
  LOGIN_TOKEN_TTL: key(
    'loginTokenTtl',
    'auth',
    duration(60, 3600),
    'Passwordless login token lifetime (out-of-band links live at most 10 minutes by default, ASVS 6.5.5).',
    { default: '10m' },
  ),
  EMAIL_CHANGE_TOKEN_TTL: key(
    'emailChangeTokenTtl',
    'auth',
    duration(300, 7 * 86400),
    'Lifetime of the link that confirms a new email address (POST /auth/user/me/email, docs/email-change.md).',
    { default: '1h' },
  ),
  APP_URL: key('appUrl', 'auth', url(['http', 'https']).optional(), 'Front-end base URL used in links (reset page, login link). Default PUBLIC_URL.'),
  RESET_URL_ALLOWLIST: key('resetUrlAllowlist', 'auth', list, 'Origins a client-supplied resetUrl / redirect_url may point to (comma list).', { default: [] }),
  VERIFY_REDIRECT_URL: key(
    'verifyRedirectUrl',
    'auth',
    url(['http', 'https']).optional(),
    'Where GET /auth/token/verify redirects after verifying; absent: JSON answer.',
  ),

  // Social login (BETA)
  SOCIAL_LOGIN: key('socialLogin', 'social', bool, 'Social login switch: off, its routes answer 503 SOCIAL_LOGIN_DISABLED.', { default: false }),
  SOCIAL_AUTH: key(
    'socialAuth',
    'social',
    socialAuthSchema,
    'JSON keyed by provider (google, github, facebook, apple, discord, microsoft): client_id or client_ids, client_secret, scopes, store_tokens, tenant (Microsoft), team_id / key_id / private_key_file (Apple), endpoints {authorization, token, userinfo, emails, jwks, issuer, token_check}.',
    { default: '{}', secret: true },
  ),
  FRONTEND_URL: key(
    'frontendUrl',
    'social',
    url(['http', 'https']).optional(),
    'Front-end the social callback redirects to (FRONTEND_URL/login?social_login=…). Default APP_URL, then PUBLIC_URL.',
  ),
  SOCIAL_REDIRECT_ALLOWLIST: key(
    'socialRedirectAllowlist',
    'social',
    list,
    'Origins a return_to of GET /auth/social/{provider}/login may point to (comma list).',
    { default: [] },
  ),
  SOCIAL_PROVIDER_TIMEOUT_MS: key(
    'socialProviderTimeoutMs',
    'social',
    int(100, 60_000),
    'Longest wait for one call to an identity provider; past it the sign-in answers 503 SOCIAL_PROVIDER_UNAVAILABLE.',
    { default: 8000 },
  ),
  SOCIAL_CALLBACK_MODE: key(
    'socialCallbackMode',
    'social',
    z.enum(['cookie', 'params']),
    'How the callback hands the session to the front-end: HttpOnly cookie, or session_id in the redirect (legacy).',
    { default: 'cookie' },
  ),
};
