import path from 'node:path';
import { z } from 'zod';
import { key } from './key-def.js';
import { bool, int, list, SIZE_PATTERN, strongSecret, trustProxy, url } from './readers.js';

/** Configuration keys (schema.ts CONFIG_KEYS, in this order): the server itself, its storage and its own secrets. */
export const SERVER_KEYS = {
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
  CORS_ORIGINS: key(
    'corsOrigins',
    'server',
    // Every answer allows credentials, so `*` would hand any site the user's cookie session (ASVS 3.4.2).
    list.refine((origins) => !origins.includes('*'), {
      message:
        "`*` is refused: CORS answers with credentials, so it would let every website act with a signed-in user's cookie and would switch off the cross-site check; list the origins instead, e.g. CORS_ORIGINS=https://app.example.com,https://admin.example.com",
    }),
    'Comma list of browser origins allowed to call the API with credentials (`*` is refused).',
    { default: [] },
  ),
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
  ALLOW_PLAINTEXT_BACKENDS: key(
    'allowPlaintextBackends',
    'storage',
    bool,
    'Allow an unencrypted connection to a PostgreSQL or Redis on another host (without it, such a DATABASE_URL or REDIS_URL is refused at start).',
    { default: false },
  ),
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
};
