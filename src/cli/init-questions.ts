import type { Config, ConfigKey } from '../config/schema.js';
import { CONFIG_KEYS } from '../config/schema.js';
import { validateValues, type ConfigValues } from './config-file.js';
import { UsageError } from './errors.js';
import { generatePassword, readPasswordFile, readPasswordStdin } from './secrets.js';
import type { Ui } from './ui.js';

export interface InitOptions {
  databaseUrl?: string;
  redisUrl?: string;
  redisPrefix?: string;
  publicUrl?: string;
  port?: string;
  host?: string;
  smtpUrl?: string;
  mailFrom?: string;
  /** --web-pages / --no-web-pages; undefined when neither is given. */
  webPages?: boolean;
  adminEmail?: string;
  adminPasswordStdin?: boolean;
  adminPasswordFile?: string;
  adminName?: string;
  yes?: boolean;
  prompt?: boolean;
  json?: boolean;
}

export interface AdminPlan {
  email: string;
  password: string;
  /** Generated here, so it must be shown once. */
  generated: boolean;
  name?: string;
}

/** A prompt validator from the key's own schema, so the prompt accepts what the config accepts. */
const validator =
  (key: ConfigKey, optional = false) =>
  (v: string) => {
    if (optional && v === '') return true;
    const r = CONFIG_KEYS[key].schema.safeParse(v);
    return r.success || r.error.issues.map((i) => i.message).join('; ');
  };

const defined = (o: ConfigValues): ConfigValues => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * The config values this run sets. Flags always count (a re-run with a new --port changes PORT);
 * questions are asked only when there is no config.json yet, and --yes / --no-prompt take their
 * defaults: SQLite, no Redis, the outbox, PUBLIC_URL derived from HOST and PORT. With a Redis URL the
 * key prefix is recorded too (--redis-prefix, else the one the environment gives or the default).
 */
export async function configAnswers(ui: Ui, opts: InitOptions, existing: ConfigValues | null, base: Config): Promise<ConfigValues> {
  const flags = defined({
    PORT: opts.port !== undefined && /^\d+$/.test(opts.port) ? Number(opts.port) : opts.port,
    HOST: opts.host,
    PUBLIC_URL: opts.publicUrl,
    DATABASE_URL: opts.databaseUrl,
    REDIS_URL: opts.redisUrl,
    REDIS_PREFIX: opts.redisPrefix,
    SMTP_URL: opts.smtpUrl,
    MAIL_FROM: opts.mailFrom,
    WEB_PAGES: opts.webPages,
  });
  validateValues(flags, 'flag');
  if (existing) return flags;

  const v: ConfigValues = { PORT: base.port, HOST: base.host, ...flags };
  if (flags.DATABASE_URL === undefined) {
    const kind = await ui.select({
      flag: '--database-url',
      message: 'Database',
      default: 'sqlite',
      choices: [
        { value: 'sqlite', name: 'Embedded SQLite in the data dir (single server)' },
        { value: 'postgres', name: 'PostgreSQL (enter its URL)' },
      ],
    });
    if (kind === 'postgres') {
      v.DATABASE_URL = await ui.input({
        flag: '--database-url',
        message: 'PostgreSQL URL (postgres://user:pass@host:5432/db)',
        validate: validator('DATABASE_URL'),
      });
    }
  }
  if (flags.REDIS_URL === undefined) {
    const url = await ui.input({
      flag: '--redis-url',
      message: 'Redis URL (empty: none; cache and limits stay in-process)',
      default: '',
      validate: validator('REDIS_URL', true),
    });
    if (url) v.REDIS_URL = url;
  }
  if (v.REDIS_URL !== undefined && flags.REDIS_PREFIX === undefined) {
    // Recorded with the URL, so every instance and command that shares this Redis names the same keys
    // (the environment's REDIS_PREFIX, else the default, unless the answer differs).
    v.REDIS_PREFIX = await ui.input({
      flag: '--redis-prefix',
      message: 'Redis key prefix (instances sharing one Redis need different prefixes)',
      default: base.redisPrefix,
      validate: validator('REDIS_PREFIX'),
    });
  }
  if (flags.PUBLIC_URL === undefined) {
    const host = v.HOST === '0.0.0.0' || v.HOST === '::' ? 'localhost' : String(v.HOST);
    const derived = `http://${host.includes(':') ? `[${host}]` : host}:${v.PORT}`;
    const url = await ui.input({
      flag: '--public-url',
      message: 'Public URL (links in mail; https makes cookies Secure)',
      default: derived,
      validate: validator('PUBLIC_URL'),
    });
    // Left unset it follows HOST and PORT; only a different answer is written.
    if (url !== derived) v.PUBLIC_URL = url;
  }
  if (flags.SMTP_URL === undefined) {
    const kind = await ui.select({
      flag: '--smtp-url',
      message: 'Outgoing mail',
      default: 'outbox',
      choices: [
        { value: 'outbox', name: 'Outbox: write messages as files in the data dir (nothing is sent)' },
        { value: 'smtp', name: 'SMTP server (enter its URL)' },
      ],
    });
    if (kind === 'smtp') {
      v.SMTP_URL = await ui.input({ flag: '--smtp-url', message: 'SMTP URL (smtp://user:pass@host:587)', validate: validator('SMTP_URL') });
      if (flags.MAIL_FROM === undefined) {
        const from = await ui.input({ flag: '--mail-from', message: 'Sender address', default: base.mailFrom, validate: validator('MAIL_FROM') });
        if (from !== base.mailFrom) v.MAIL_FROM = from;
      }
    }
  }
  return v;
}

/**
 * The superadmin to create, resolved before anything is written so a missing password stops init
 * with exit 2 and no change. 'ask' = ask once the database is open, if it has no superadmin yet.
 */
export async function adminAnswers(ui: Ui, opts: InitOptions, stdin: NodeJS.ReadableStream & { isTTY?: boolean }): Promise<AdminPlan | 'ask' | null> {
  if (!opts.adminEmail) {
    if (opts.adminPasswordStdin || opts.adminPasswordFile || opts.adminName) {
      throw new UsageError('--admin-password-stdin, --admin-password-file and --admin-name need --admin-email');
    }
    return ui.interactive ? 'ask' : null;
  }
  const email = opts.adminEmail.trim();
  if (opts.adminPasswordStdin) return { email, password: await readPasswordStdin(stdin, '--admin-password-stdin'), generated: false, name: opts.adminName };
  if (opts.adminPasswordFile)
    return { email, password: await readPasswordFile(opts.adminPasswordFile, '--admin-password-file'), generated: false, name: opts.adminName };
  return { email, ...(await askPassword(ui, email)), name: opts.adminName };
}

/** Asks for a password twice; empty (or --yes) generates one. */
export async function askPassword(ui: Ui, email: string): Promise<{ password: string; generated: boolean }> {
  let generated = false;
  const password = await ui.password({
    flag: '--admin-password-stdin or --admin-password-file',
    message: `Password for ${email} (empty: generate one)`,
    what: `the password for ${email}`,
    yesDefault: () => {
      generated = true;
      return generatePassword();
    },
  });
  if (!password) return { password: generatePassword(), generated: true };
  if (!generated && ui.interactive) {
    const again = await ui.password({ flag: '--admin-password-stdin', message: 'Repeat the password' });
    if (again !== password) throw new UsageError('the passwords do not match');
  }
  return { password, generated };
}
