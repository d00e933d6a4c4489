import { oidcCheck } from './oidc.js';
import type { Check } from './check.js';
import { configFileModeCheck } from './config-file-mode.js';
import { configCheck } from './config.js';
import { dataDirCheck } from './data-dir.js';
import { databaseCheck } from './database.js';
import { migrationsCheck } from './migrations.js';
import { moduleChecks, moduleSettingsCheck } from './module-checks.js';
import { nodeVersionCheck } from './node-version.js';
import { redisCheck } from './redis.js';
import { searchIndexCheck } from './search-index.js';
import { secretsCheck } from './secrets.js';
import { sessionBacklogCheck } from './session-backlog.js';
import { socialCheck } from './social.js';
import { webhooksCheck } from './webhooks.js';

const smtpCheck: Check = {
  id: 'smtp',
  title: 'SMTP reachable',
  category: 'mail',
  async run(ctx) {
    const { checkSmtp } = await import('./smtp.js');
    const r = await checkSmtp(ctx.requireConfig(), ctx.logger);
    const hint = r.status === 'fail' ? 'check SMTP_URL (host, port, credentials)' : r.status === 'warn' ? 'set SMTP_URL to deliver mail' : undefined;
    return { status: r.status, message: r.detail, hint };
  },
};

/** The core checks, in the order doctor runs them. */
export const coreChecks: Check[] = [
  nodeVersionCheck,
  configCheck,
  configFileModeCheck,
  secretsCheck,
  dataDirCheck,
  databaseCheck,
  redisCheck,
  migrationsCheck,
  searchIndexCheck,
  sessionBacklogCheck,
  webhooksCheck,
  oidcCheck,
  smtpCheck,
  socialCheck,
  moduleSettingsCheck,
  moduleChecks,
];

const extraChecks: Check[] = [];

/** Lets a module contribute doctor (and preflight) checks. */
export function registerCheck(check: Check): void {
  if ([...coreChecks, ...extraChecks].some((c) => c.id === check.id)) throw new Error(`duplicate check id: ${check.id}`);
  extraChecks.push(check);
}

export const doctorChecks = (): Check[] => [...coreChecks, ...extraChecks];

/** The checks `init` or `serve` run before doing anything; any failure stops them. */
export const preflightChecks = (purpose: 'init' | 'serve'): Check[] => doctorChecks().filter((c) => c.preflight?.includes(purpose));
