import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { weakness } from './secret-strength.js';
import { socialAuthSchema } from '../social/settings.js';

/**
 * Every configuration key Gatehouse reads. The operator-facing name (the environment variable, and the
 * key in the data dir's config.json) is the object key; `prop` is the name code uses.
 * The README's configuration reference is checked against this table by a test.
 */

const bool = z.preprocess((v) => {
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(s)) return true;
    if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
  }
  return v;
}, z.boolean());

const int = (min: number, max: number) => {
  const error = `expected a whole number from ${min} to ${max}`;
  return z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), z.number({ error }).int(error).min(min, error).max(max, error));
};

const DURATION_RE = /^(\d+)\s*(ms|s|m|h|d)?$/;
/** A byte size such as `100kb`, `1mb`, `512b` (BODY_LIMIT); parsed by the JSON body reader. */
export const SIZE_PATTERN = /^(\d+)(b|kb|mb)$/i;
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** Parses "90", "15m", "7d" into seconds. */
export function parseDuration(value: string | number): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : null;
  const m = DURATION_RE.exec(value.trim());
  if (!m) return null;
  return Number(m[1]) * UNIT_SECONDS[m[2] ?? 's'];
}

/** A duration given as seconds or with a unit (s, m, h, d); parsed to whole seconds. */
const duration = (minSeconds: number, maxSeconds: number) =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const s = parseDuration(v);
    if (s === null) {
      ctx.addIssue({ code: 'custom', message: 'expected a duration such as 3600, 90s, 15m, 1h or 7d' });
      return z.NEVER;
    }
    if (s < minSeconds || s > maxSeconds) {
      ctx.addIssue({ code: 'custom', message: `must be between ${minSeconds}s and ${maxSeconds}s` });
      return z.NEVER;
    }
    return Math.round(s);
  });

const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol.replace(':', ''));
      } catch {
        return false;
      }
    },
    { message: `expected a URL (${protocols.join(', ')})` },
  );

const list = z.preprocess(
  (v) =>
    typeof v === 'string'
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : v,
  z.array(z.string()),
);

/** "false" | hop count | comma list of CIDR/addresses, as Express understands it. */
const trustProxy = z.preprocess(
  (v) => {
    if (typeof v === 'boolean') return v ? 1 : false;
    if (typeof v === 'string') {
      const s = v.trim().toLowerCase();
      if (s === '' || s === 'false' || s === '0' || s === 'no') return false;
      if (s === 'true') return 1;
      if (/^\d+$/.test(s)) return Number(s);
      return s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    }
    return v;
  },
  z.union([
    z.literal(false),
    z.number().int().min(1).max(10),
    z.array(z.string().refine(isProxyAddress, { message: 'expected addresses or CIDRs (or loopback, linklocal, uniquelocal)' })),
  ]),
);

/** What Express's `trust proxy` list accepts; checked here so a typo fails at startup, not in Express. */
function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [ip, range, ...rest] = entry.split('/');
  const family = isIP(ip);
  if (!family || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d+$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(range) === 4;
}

/** A rate limit written as "attempts/window", e.g. "5/15m". */
export const rateLimit = z.string().transform((v, ctx) => {
  const m = /^(\d+)\s*\/\s*(.+)$/.exec(v.trim());
  const seconds = m ? parseDuration(m[2]) : null;
  if (!m || seconds === null || seconds < 1 || Number(m[1]) < 1) {
    ctx.addIssue({ code: 'custom', message: 'expected "attempts/window", e.g. 5/15m' });
    return z.NEVER;
  }
  return { points: Number(m[1]), durationSec: Math.round(seconds) };
});

/** A secret the doctor would pass (secret-strength.ts): refused at start instead of warned about later. */
const strongSecret = z.string().superRefine((v, ctx) => {
  const w = weakness(v);
  if (w) ctx.addIssue({ code: 'custom', message: `${w}; generate one with: openssl rand -base64 32` });
});

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
  LOG_LEVEL: key('logLevel', 'server', z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'Log level.', { default: 'info' }),
  LOG_FORMAT: key(
    'logFormat',
    'server',
    z.enum(['pretty', 'json']).optional(),
    'Log lines: `pretty` (one readable line each) or `json` (one JSON document each). Default: pretty when the log goes to a terminal, json anywhere else (systemd, pipes, containers).',
  ),
  SHUTDOWN_TIMEOUT: key(
    'shutdownTimeout',
    'server',
    int(1, 300),
    'Seconds requests in flight get to finish after SIGTERM; what cannot finish by then is answered 503. The process exits within this plus 5 s.',
    { default: 10 },
  ),
  JOBS_ENABLED: key('jobsEnabled', 'server', bool, 'Run scheduled jobs (session expiry, token cleanup).', { default: true }),
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
  TRUSTED_DEVICE_TTL: key(
    'trustedDeviceTtl',
    'auth',
    duration(3600, 365 * 86400),
    'How long a device trusted at a two-factor step skips the second step for its user.',
    { default: '30d' },
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
  PRODUCT_NAME: key('productName', 'mail', z.string().min(1).max(80), 'Product name shown in messages.', { default: 'Gatehouse' }),
  BRAND_COLOR: key('brandColor', 'mail', z.string().regex(/^#[0-9a-fA-F]{6}$/, 'expected a colour such as #2f6fed'), 'Accent colour of messages.', {
    default: '#2f6fed',
  }),
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
  RATE_LIMIT_TWO_FACTOR: key(
    'rateLimitTwoFactor',
    'limits',
    rateLimit,
    'Two-factor code sends and checks (start, verify), counted per session (per address without one).',
    { default: '10/5m' },
  ),
  RATE_LIMIT_SESSION: key('rateLimitSession', 'limits', rateLimit, 'Validation and current-user reads with a valid session, counted per session.', {
    default: '600/5m',
  }),
  RATE_LIMITS_ENABLED: key('rateLimitsEnabled', 'limits', bool, 'Enforce rate limits (switch off only for benchmarks).', { default: true }),
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
