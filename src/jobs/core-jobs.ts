import type { AuditService } from '../audit/audit-service.js';
import type { Config } from '../config/schema.js';
import type { SystemModels } from '../data/models/system.models.js';
import type { AuthTokenRepository } from '../data/repositories/auth-token-repository.js';
import type { SessionService } from '../services/session-service.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { pruneRuns } from './job-lock.js';

/** What the core jobs work with (a module's job gets its module's context instead). */
export interface JobDeps {
  config: Pick<Config, 'sessionExpiryBatch' | 'sessionExpiryMaxPerRun' | 'auditRetentionDays'>;
  services: {
    sessions: Pick<SessionService, 'pruneExpired'>;
    audit: Pick<AuditService, 'prune'>;
    webhooks: Pick<WebhookService, 'pruneWebhookLog'>;
    /** The OpenID provider's expired artefacts (src/oidc). */
    oidc: { prune(): Promise<unknown> };
  };
  models: Pick<SystemModels, 'JobRun'>;
  repos: { authTokens: Pick<AuthTokenRepository, 'deleteSpent'> };
}

export interface JobDef {
  name: string;
  /** node-cron expression. */
  schedule: string;
  run(deps: JobDeps): Promise<string>;
}

export const sessionExpiryJob: JobDef = {
  name: 'session-expiry',
  schedule: '*/10 * * * *',
  async run(app) {
    const n = await app.services.sessions.pruneExpired({ batch: app.config.sessionExpiryBatch, max: app.config.sessionExpiryMaxPerRun });
    return `${n} expired sessions deleted`;
  },
};

export const tokenCleanupJob: JobDef = {
  name: 'token-cleanup',
  schedule: '17 * * * *',
  async run(app) {
    const tokens = await app.repos.authTokens.deleteSpent(new Date());
    const runs = await pruneRuns(app);
    // The OpenID provider's expired artefacts (codes, tokens, grants, interactions) go with them.
    await app.services.oidc.prune();
    return `${tokens} tokens and ${runs} job records deleted, expired OIDC artefacts pruned`;
  },
};

/**
 * Security events past AUDIT_RETENTION_DAYS (docs/audit.md), and the webhook log with them, deleted as
 * expired sessions are: a short
 * statement per batch with a rest after each, so a year's backlog on first run never holds a core or a
 * lock for long; what one run leaves waits for the next night.
 */
export const auditRetentionJob: JobDef = {
  name: 'audit-retention',
  schedule: '23 3 * * *',
  async run(app) {
    const days = app.config.auditRetentionDays;
    if (days === 0) return 'kept forever (AUDIT_RETENTION_DAYS=0)';
    const n = await app.services.audit.prune(days, app.config.sessionExpiryBatch, { max: app.config.sessionExpiryMaxPerRun, rest: 1 });
    // The webhook delivery log goes with the events it delivered (docs/webhooks.md); pending messages stay.
    const log = await app.services.webhooks.pruneWebhookLog(days, app.config.sessionExpiryBatch);
    return `${n} security events and ${log} webhook log entries older than ${days} days deleted`;
  },
};

export const coreJobs: JobDef[] = [sessionExpiryJob, tokenCleanupJob, auditRetentionJob];
