import type { Sequelize } from 'sequelize';
import type { AuditService } from '../audit/audit-service.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { createSealer } from '../social/crypto.js';
import { packageVersion } from '../version.js';
import { createWebhookRepository } from './webhook-repository.js';
import { createWebhookService, type WebhookService } from './webhook-service.js';

export interface WebhooksDeps {
  config: Pick<Config, 'cookieSecret' | 'bridgeSecret' | 'webhookAllowHttp' | 'webhookAllowPrivateUrls' | 'webhookRetrySchedule' | 'webhookTimeout'>;
  sequelize: Sequelize;
  audit: AuditService;
  logger: Logger;
  metrics: Pick<Metrics, 'webhookDelivery' | 'onScrape' | 'webhookOutboxDepth' | 'webhookOldestPendingSeconds'>;
  instanceId: string;
  clock?: () => Date;
  dbHealth?: { available(): boolean; observe(err: unknown): boolean };
}

/**
 * Signed webhooks, built by core's builder (app-context.ts): the outbox listener on the audit record,
 * the service the CLI and the admin API use, and the gauges read at scrape time. The worker is started
 * by `serve` only (`startWorker`), never by one-shot commands.
 */
export function createWebhooks(deps: WebhooksDeps): WebhookService {
  const { config } = deps;
  const secret = config.cookieSecret ?? config.bridgeSecret ?? null;
  const repo = createWebhookRepository(deps.sequelize);
  const service = createWebhookService({
    repo,
    audit: deps.audit,
    transaction: (fn) => deps.sequelize.transaction(fn),
    sealer: secret ? createSealer(secret, 'webhook-secrets') : null,
    policy: { allowHttp: config.webhookAllowHttp, allowPrivate: config.webhookAllowPrivateUrls },
    schedule: config.webhookRetrySchedule,
    timeoutMs: config.webhookTimeout * 1000,
    instanceId: deps.instanceId,
    userAgent: `Gatehouse-Webhooks/${packageVersion()}`,
    logger: deps.logger,
    clock: deps.clock,
    onOutcome: (o) => deps.metrics.webhookDelivery(o),
    dbHealth: deps.dbHealth,
  });
  deps.metrics.onScrape(async () => {
    const { pending, oldest } = await repo.pendingStats();
    deps.metrics.webhookOutboxDepth.set(pending);
    const now = deps.clock?.() ?? new Date();
    deps.metrics.webhookOldestPendingSeconds.set(oldest ? Math.max(0, (now.getTime() - oldest.getTime()) / 1000) : 0);
  });
  return service;
}
