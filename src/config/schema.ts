import path from 'node:path';
import { z } from 'zod';
import { bool, duration, int, list, rateLimit, SIZE_PATTERN, strongSecret, trustProxy, url, webhookSchedule } from './readers.js';
import { socialAuthSchema } from '../social/settings.js';

/**
 * Every configuration key Gatehouse reads. The operator-facing name (the environment variable, and the
 * key in the data dir's config.json) is the object key; `prop` is the name code uses.
 * The README's configuration reference is checked against this table by a test.
 */

export interface KeyDef {
  prop: string;
  schema: z.ZodTypeAny;
  default?: unknown;
  secret?: boolean;
  doc: string;
  group: string;
}

function key<P extends string, S extends z.ZodTypeAny>(
  prop: P,
  group: string,
  schema: S,
  doc: string,
  extra: Partial<KeyDef> = {},
): KeyDef & { prop: P; schema: S } {
  return { ...extra, prop, group, schema, doc };
}

export const CONFIG_KEYS = {
  // Server
  GATEHOUSE_DATA_DIR: key('dataDir', 'server', z.string().min(1), 'Data directory: config.json, SQLite file, pictures, mail outbox.', { default: './data' }),
  GATEHOUSE_ENV_FILE: key(
    'envFile',
    'server',
    z
      .string()
      .refine((v) => path.isAbsolute(v), 'expected an absolute path')
      .optional(),
    "Environment file (KEY=value lines, as systemd reads them) applied over config.json by every command; install.sh records the service's here. The `--environment-file` flag sets it too (not `--env-file`: Node 20 takes that one for itself).",
  ),
  PORT: key('port', 'server', int(0, 65535), 'TCP port to listen on.', { default: 8787 }),
  HOST: key('host', 'server', z.string().min(1), 'Address to bind.', { default: '127.0.0.1' }),
  PUBLIC_URL: key(
    'publicUrl',
    'server',
    url(['http', 'https']).optional(),
    'Public base URL (links in mail, picture URLs, Secure cookies when https). Default http://HOST:PORT.',
  ),
  TRUST_PROXY: key('trustProxy', 'server', trustProxy, 'Reverse proxies to trust for client IPs: false, a hop count, or a comma list of addresses/CIDRs.', {
    default: false,
  }),
  CORS_ORIGINS: key('corsOrigins', 'server', list, 'Comma list of browser origins allowed to call the API with credentials.', { default: [] }),
  BODY_LIMIT: key('bodyLimit', 'server', z.string().regex(SIZE_PATTERN, 'expected a size such as 100kb'), 'Maximum JSON body size.', { default: '100kb' }),
  FAST_LANE: key(
    'fastLane',
    'server',
    bool,
    'Answer warm session validations (GET/POST /auth/validation, POST /auth/bridge/validate) ahead of the framework, with the same bytes; false sends every request through it.',
    { default: true },
  ),
  LOG_LEVEL: key('logLevel', 'server', z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'Log level.', { default: 'info' }),
  LOG_FORMAT: key(
    'logFormat',
    'server',
    z.enum(['pretty', 'json']).optional(),
    'Log lines: `pretty` (one readable line each) or `json` (one JSON document each). Default: pretty when the log goes to a terminal, json anywhere else (systemd, pipes, containers).',
  ),
  ACCESS_LOG_SLOW_MS: key(
    'accessLogSlowMs',
    'server',
    int(0, 3_600_000),
    'Access log: at LOG_LEVEL info, a line for each answer that is not 2xx or took this many milliseconds or more (0: every answer); LOG_LEVEL debug writes every answer.',
    { default: 1000 },
  ),
  SHUTDOWN_TIMEOUT: key(
    'shutdownTimeout',
    'server',
    int(1, 300),
    'Seconds requests in flight get to finish after SIGTERM; what cannot finish by then is answered 503. The process exits within this plus 5 s.',
    { default: 10 },
  ),
  JOBS_ENABLED: key('jobsEnabled', 'server', bool, 'Run scheduled jobs (session expiry, token cleanup, audit retention).', { default: true }),
  METRICS_TOKEN: key(
    'metricsToken',
    'server',
    z.string().min(16, 'must be at least 16 characters').optional(),
    'Lets clients other than loopback scrape /metrics with Authorization: Bearer <token>.',
    { secret: true },
  ),
  METRICS_PORT: key('metricsPort', 'server', int(1, 65535).optional(), 'Serve /metrics on this port of its own (on HOST) instead of the API port.'),
  SESSION_EXPIRY_BATCH: key(
    'sessionExpiryBatch',
    'server',
    int(100, 100_000),
    'Expired sessions deleted per statement by the session-expiry job (each batch is its own short transaction).',
    { default: 5000 },
  ),
  SESSION_EXPIRY_MAX_PER_RUN: key(
    'sessionExpiryMaxPerRun',
    'server',
    int(1000, 1_000_000_000),
    'Most expired sessions one run of the session-expiry job deletes; the rest wait for the next run.',
    { default: 10_000_000 },
  ),
  AUDIT_RETENTION_DAYS: key(
    'auditRetentionDays',
    'server',
    int(0, 36_500),
    'Days security events are kept (docs/audit.md); the audit-retention job deletes older ones nightly, in batches. 0 keeps them forever.',
    { default: 365 },
  ),
  ADMIN_CONSOLE: key(
    'adminConsole',
    'server',
    bool,
    'Serve the admin console at /admin (admins and superadmins, docs/console.md). false: /admin answers 404.',
    { default: true },
  ),
  ADMIN_EXACT_COUNT_LIMIT: key(
    'adminExactCountLimit',
    'server',
    int(0, 10_000_000),
    "Admin user lists count matches exactly up to this many; beyond it the total is the planner's estimate (meta.total_exact false).",
    { default: 10_000 },
  ),

  // Storage
  DATABASE_URL: key('databaseUrl', 'storage', url(['postgres', 'postgresql', 'sqlite']).optional(), 'PostgreSQL URL. Absent: an SQLite file in the data dir.'),
  REDIS_URL: key('redisUrl', 'storage', url(['redis', 'rediss']).optional(), 'Redis URL for shared cache, rate limits and pub/sub. Absent: in-process.'),
  REDIS_PREFIX: key('redisPrefix', 'storage', z.string().max(64), 'Prefix for every Redis key and channel (lets instances share one Redis).', {
    default: 'gatehouse:',
  }),
  REDIS_COMMAND_TIMEOUT_MS: key(
    'redisCommandTimeoutMs',
    'storage',
    int(50, 30_000),
    'Longest wait for one Redis command; past it (or with Redis down) Gatehouse falls back to the database and in-process limits.',
    { default: 500 },
  ),

  // Secrets
  BRIDGE_VALIDATION_SECRET: key(
    'bridgeSecret',
    'security',
    strongSecret.optional(),
    'Shared secret backends send as X-Bridge-Secret (at least 32 characters, generated).',
    { secret: true },
  ),
  COOKIE_SECRET: key(
    'cookieSecret',
    'security',
    z.string().min(16, 'must be at least 16 characters').optional(),
    'Secret for signed cookies (social login state).',
    { secret: true },
  ),
  BCRYPT_ROUNDS: key('bcryptRounds', 'security', int(4, 15), 'bcrypt cost for password hashes.', { default: 12 }),

  // Sessions and accounts
  SESSION_TTL: key('sessionTtl', 'auth', duration(3600, 30 * 86400), 'Session lifetime (1h to 30d).', { default: '7d' }),
  PENDING_SESSION_TTL: key('pendingSessionTtl', 'auth', duration(60, 3600), 'Lifetime of a session waiting for two-factor.', { default: '5m' }),
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
  LOGIN_TOKEN_TTL: key('loginTokenTtl', 'auth', duration(60, 3600), 'Passwordless login token lifetime.', { default: '15m' }),
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

  // Mail and SMS
  SMTP_URL: key(
    'smtpUrl',
    'mail',
    url(['smtp', 'smtps']).optional(),
    'SMTP server (smtp://user:pass@host:587). Absent: messages go to the outbox dir in the data dir.',
    { secret: true },
  ),
  MAIL_FROM: key('mailFrom', 'mail', z.string().min(3), 'Sender address.', { default: 'Gatehouse <no-reply@localhost>' }),
  WEB_PAGES: key(
    'webPages',
    'mail',
    bool,
    "Point the mails' links (verification, password reset, email change) at Gatehouse's own hosted pages (/verify-email, /reset-password, /account/email/confirm) instead of the API routes and APP_URL/reset-password. The pages are served either way.",
    { default: false },
  ),
  WEB_LOGO_FILE: key(
    'webLogoFile',
    'mail',
    z.string().min(1).max(4096).optional(),
    'PNG, SVG, WebP or JPEG file shown as the logo on the hosted pages (served by Gatehouse itself).',
  ),
  PRODUCT_NAME: key('productName', 'mail', z.string().min(1).max(80), 'Product name shown in messages.', { default: 'Gatehouse' }),
  BRAND_COLOR: key('brandColor', 'mail', z.string().regex(/^#[0-9a-fA-F]{6}$/, 'expected a colour such as #2f6fed'), 'Accent colour of messages.', {
    default: '#2f6fed',
  }),
  NEW_DEVICE_EMAILS: key(
    'newDeviceEmails',
    'mail',
    bool,
    'Mail a user when they sign in from a browser/OS or a network (IPv4 /24, IPv6 /48) not seen on their account in the last 90 days (never for the first sign-in).',
    { default: true },
  ),
  SUPPORT_EMAIL: key(
    'supportEmail',
    'mail',
    z.email('expected an email address').optional(),
    'Address security notices tell users to write to when a change was not theirs. Absent: they are told to contact the administrator.',
  ),
  SMS_PROVIDER: key(
    'smsProvider',
    'mail',
    z.enum(['outbox', 'twilio']),
    'SMS provider: outbox (files in the data dir) or twilio (Twilio-compatible REST API).',
    { default: 'outbox' },
  ),
  SMS_API_URL: key('smsApiUrl', 'mail', url(['http', 'https']), 'Base URL of the Twilio-compatible API.', { default: 'https://api.twilio.com' }),
  SMS_ACCOUNT_SID: key('smsAccountSid', 'mail', z.string().optional(), 'SMS account id.'),
  SMS_AUTH_TOKEN: key('smsAuthToken', 'mail', z.string().optional(), 'SMS auth token.', { secret: true }),
  SMS_FROM: key('smsFrom', 'mail', z.string().optional(), 'SMS sender number.'),

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
    { default: '100000/5m' },
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
  // Webhooks (src/webhooks, docs/webhooks.md)
  WEBHOOK_RETRY_SCHEDULE: key(
    'webhookRetrySchedule',
    'webhooks',
    webhookSchedule,
    'Seconds to wait before each delivery attempt of a webhook message, comma-separated (the first is the first attempt); after the last failure the message is failed.',
    { default: '0,5,300,1800,7200,18000,36000,36000' },
  ),
  WEBHOOK_TIMEOUT: key('webhookTimeout', 'webhooks', int(1, 60), 'Seconds a webhook receiver has to answer one delivery before it counts as failed.', {
    default: 10,
  }),
  WEBHOOK_ALLOW_HTTP: key('webhookAllowHttp', 'webhooks', bool, 'Allow http:// webhook URLs (otherwise https only).', { default: false }),
  WEBHOOK_ALLOW_PRIVATE_URLS: key(
    'webhookAllowPrivateUrls',
    'webhooks',
    bool,
    'Allow webhook URLs that resolve to loopback, private, link-local, CGNAT, metadata, unspecified or multicast addresses (for local receivers in development and tests).',
    { default: false },
  ),
  OIDC_ENABLED: key(
    'oidcEnabled',
    'oidc',
    bool,
    'Serve the OpenID Connect provider (discovery, /oidc/*; docs/oidc.md). With no client registered nothing can use it.',
    { default: true },
  ),
  OIDC_KEY_ROTATION_GRACE: key(
    'oidcKeyRotationGrace',
    'oidc',
    duration(0, 30 * 86400),
    'How long a key made by `gatehouse oidc keys rotate` is published before it signs (relying parties refresh their JWKS cache).',
    { default: '1d' },
  ),
  OIDC_CODE_TTL_SECONDS: key(
    'oidcCodeTtlSeconds',
    'oidc',
    int(1, 600),
    'How long an OpenID Connect authorization code may be redeemed, in seconds (short: a code is used at once).',
    { default: 60 },
  ),
} satisfies Record<string, KeyDef>;

export type ConfigKey = keyof typeof CONFIG_KEYS;

type Out<K extends ConfigKey> = z.output<(typeof CONFIG_KEYS)[K]['schema']>;
type PropOf<K extends ConfigKey> = (typeof CONFIG_KEYS)[K]['prop'];

export type RateLimitSetting = { points: number; durationSec: number };

/** The validated, frozen configuration. */
export type Config = { readonly [K in ConfigKey as PropOf<K>]: Out<K> } & {
  /** Resolved absolute data dir. */
  readonly dataDirAbs: string;
  /** PUBLIC_URL or the default derived from HOST and PORT, without trailing slash. */
  readonly publicBaseUrl: string;
  /** Where the config file lives. */
  readonly configFile: string;
  /** Module settings and limits from the environment or env file, raw, by name (src/modules/module-env.ts). */
  readonly moduleEnv: Readonly<Record<string, string>>;
};
