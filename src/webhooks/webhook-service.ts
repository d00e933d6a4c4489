import type { Transaction } from 'sequelize';
import type { AuditService } from '../audit/audit-service.js';
import type { AuditEvent } from '../audit/audit-types.js';
import { eventId } from '../audit/event-id.js';
import { matchesType } from '../audit/type-filter.js';
import { badRequest, notFound, unavailable } from '../errors/app-error.js';
import type { Logger } from '../log/logger.js';
import type { Sealer } from '../social/crypto.js';
import { checkedAddresses, parseWebhookUrl, type UrlPolicy } from './webhook-address.js';
import type { WebhookCreateInput } from './webhook-input.js';
import type { WebhookRepository } from './webhook-repository.js';
import { sendAttempt } from './webhook-sender.js';
import { newSecret } from './webhook-signing.js';
import type { AttemptResult, EndpointRow, WebhookDelivery, WebhookEndpoint, WebhookMessage } from './webhook-types.js';
import { startWebhookWorker, type WebhookWorker } from './webhook-worker.js';

/** How long a rotated-out secret keeps signing, so receivers can switch over. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface WebhookServiceDeps {
  repo: WebhookRepository;
  audit: AuditService;
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Seals secrets at rest (null without a server secret: no endpoint can be registered then). */
  sealer: Sealer | null;
  policy: UrlPolicy;
  schedule: readonly number[];
  timeoutMs: number;
  instanceId: string;
  userAgent: string;
  logger: Logger;
  clock?: () => Date;
  onOutcome?(outcome: 'delivered' | 'retry' | 'failed'): void;
  dbHealth?: { available(): boolean; observe(err: unknown): boolean };
}

/** Whether an endpoint's subscription takes an event type: exact, a family (`user.*`) or `*`. */
export function subscribes(events: readonly string[], type: string): boolean {
  return events.some((e) => matchesType(type, e));
}

/**
 * The Standard Webhooks body: the event, without what names a person — the address, the agent and the
 * identifier (an unknown account's address, a previous email) — unless the endpoint opted in. Those are
 * what an erasure removes from the record; a message already sent cannot be called back.
 */
export function webhookBody(event: AuditEvent, includeIpUserAgent: boolean): string {
  const data: Partial<AuditEvent> = { ...event };
  if (!includeIpUserAgent) {
    delete data.ip;
    delete data.user_agent;
    if (event.details.identifier !== undefined) {
      const { identifier: _personal, ...details } = event.details;
      data.details = details;
    }
  }
  return JSON.stringify({ type: event.type, timestamp: event.at, data });
}

const publicEndpoint = ({ secret_sealed: _s, previous_secret_sealed: _p, kind: _k, ...e }: EndpointRow): WebhookEndpoint => e;

/**
 * A delivery core makes for itself through the outbox (its retries, lease and address rules): the body is
 * built when each attempt is sent (a logout token is signed fresh), unsigned by the webhook secret.
 */
export type SystemBody = (payload: string) => Promise<{ body: string; contentType: string }>;

export function createWebhookService(deps: WebhookServiceDeps) {
  const log = deps.logger.child({ component: 'webhooks' });
  const now = () => deps.clock?.() ?? new Date();
  let worker: WebhookWorker | null = null;

  function sealer(): Sealer {
    if (!deps.sealer) throw unavailable('Webhooks need a server secret (COOKIE_SECRET or BRIDGE_VALIDATION_SECRET) to keep their signing secrets sealed');
    return deps.sealer;
  }

  /** The secrets that sign now: the current one, and the previous one until its overlap ends. */
  function secretsOf(e: EndpointRow): string[] {
    if (e.kind !== 'webhook') return [];
    const open = (sealed: string) => {
      const s = sealer().open(sealed);
      if (!s) throw new Error(`webhook endpoint ${e.id}: its secret cannot be opened with this server's secret`);
      return s;
    };
    const out = [open(e.secret_sealed)];
    if (e.previous_secret_sealed && e.previous_secret_expires_at && new Date(e.previous_secret_expires_at) > now()) out.push(open(e.previous_secret_sealed));
    return out;
  }

  function checkEvents(events: string[]): string[] {
    const declared = [...deps.audit.types().keys()];
    const unknown = events.filter((t) => t !== '*' && !(t.endsWith('.*') ? declared.some((d) => matchesType(d, t)) : deps.audit.knows(t)));
    if (unknown.length) {
      const message = `not declared event types: ${unknown.join(', ')} (see docs/audit.md; a family is written family.*)`;
      throw badRequest(`events: ${message}`, [{ field: 'events', message }]);
    }
    return [...new Set(events)];
  }

  async function mustFind(id: string): Promise<EndpointRow> {
    const e = await deps.repo.findEndpoint(id);
    if (!e || e.kind !== 'webhook') throw notFound(`No webhook endpoint with the id ${id}`);
    return e;
  }

  const systemKinds = new Map<string, SystemBody>();
  const send = async (e: EndpointRow, m: Pick<WebhookMessage, 'id' | 'payload'>, secrets: string[], signal?: AbortSignal): Promise<AttemptResult> => {
    const common = { url: e.url, messageId: m.id, timeoutMs: deps.timeoutMs, policy: deps.policy, signal, userAgent: deps.userAgent };
    if (e.kind === 'webhook') return sendAttempt({ ...common, body: m.payload, secrets }, now);
    let built: { body: string; contentType: string };
    try {
      const build = systemKinds.get(e.kind);
      if (!build) throw new Error(`nothing in this process builds ${e.kind} deliveries`);
      built = await build(m.payload);
    } catch (err) {
      return { ok: false, statusCode: null, durationMs: 0, error: `could not be built: ${(err as Error).message}`.slice(0, 500), responseBody: null };
    }
    return sendAttempt({ ...common, body: built.body, contentType: built.contentType, secrets: [] }, now);
  };

  // Events that put messages in the outbox: only those wake the worker once committed (an event no
  // endpoint subscribes to, the common case, costs no claim query). Weak: a rolled-back event's entry goes with it.
  const enqueued = new WeakSet<object>();

  return {
    /**
     * The outbox: one message per subscribed endpoint, written in the event's own transaction, so a
     * committed event always has its messages and a rolled-back one has none (an in-transaction
     * reaction of the event table, src/app-events.ts).
     */
    async enqueueFor(event: AuditEvent, tx: Transaction): Promise<void> {
      const endpoints = await deps.repo.enabledEndpoints({ tx });
      const at = now();
      for (const e of endpoints) {
        if (!subscribes(e.events, event.type)) continue;
        enqueued.add(event);
        await deps.repo.insertMessage(
          {
            id: `msg_${eventId()}`,
            endpoint_id: e.id,
            event_id: event.id,
            type: event.type,
            payload: webhookBody(event, e.include_ip_user_agent),
            status: 'pending',
            next_attempt_at: new Date(at.getTime() + (deps.schedule[0] ?? 0) * 1000),
            created_at: at,
          },
          { tx },
        );
      }
    },
    /** After the event committed: wakes the worker when `enqueueFor` put a message in the outbox for it. */
    wakeFor(event: AuditEvent): void {
      if (enqueued.delete(event)) worker?.wake();
    },
    /** How the body of a kind of core's own deliveries is built (each attempt). */
    registerKind(kind: string, build: SystemBody): void {
      systemKinds.set(kind, build);
    },
    /**
     * Puts one of core's own deliveries in the outbox, in the caller's unit of work: to the endpoint `id` of
     * `kind` (made or pointed at `url`), with what its body is built from. The worker is woken after commit.
     */
    async enqueueSystem(d: { id: string; kind: string; url: string; type: string; payload: string }, tx: Transaction): Promise<void> {
      const at = now();
      await deps.repo.upsertSystemEndpoint({ id: d.id, kind: d.kind, url: d.url, now: at }, { tx });
      await deps.repo.insertMessage(
        { id: `msg_${eventId()}`, endpoint_id: d.id, event_id: null, type: d.type, payload: d.payload, status: 'pending', next_attempt_at: at, created_at: at },
        { tx },
      );
      tx.afterCommit(() => worker?.wake());
    },
    /** Registers an endpoint; the secret is in the answer once and never again. */
    async create(input: WebhookCreateInput): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
      const url = parseWebhookUrl(input.url, deps.policy);
      await checkedAddresses(url, deps.policy);
      const events = checkEvents(input.events);
      const secret = newSecret();
      const row: EndpointRow = {
        id: `whe_${eventId()}`,
        url: url.toString(),
        description: input.description || null,
        events,
        secret_sealed: sealer().seal(secret),
        previous_secret_sealed: null,
        previous_secret_expires_at: null,
        include_ip_user_agent: input.include_ip_user_agent ?? false,
        enabled: true,
        disabled_reason: null,
        created_at: now().toISOString(),
        failing_since: null,
        kind: 'webhook',
      };
      await deps.transaction(async (tx) => {
        await deps.repo.insertEndpoint(row, { tx });
        // The origin only: receivers often put their secret in the path or the query (Slack, Discord),
        // and the record — read by admins, sent to other endpoints — keeps no secret.
        await deps.audit.record({ type: 'webhook.created', details: { webhook_id: row.id, origin: url.origin, events } }, { tx });
      });
      log.info({ endpoint: row.id, origin: url.origin, events }, 'webhook endpoint registered');
      return { endpoint: publicEndpoint(row), secret };
    },
    async list(): Promise<WebhookEndpoint[]> {
      return (await deps.repo.listEndpoints()).map(publicEndpoint);
    },
    async get(id: string): Promise<WebhookEndpoint> {
      return publicEndpoint(await mustFind(id));
    },
    async remove(id: string): Promise<void> {
      await deps.transaction(async (tx) => {
        const e = await deps.repo.findEndpoint(id, { tx });
        if (!e || !(await deps.repo.deleteEndpoint(id, { tx }))) throw notFound(`No webhook endpoint with the id ${id}`);
        await deps.audit.record({ type: 'webhook.deleted', details: { webhook_id: id, origin: new URL(e.url).origin } }, { tx });
      });
      log.info({ endpoint: id }, 'webhook endpoint removed');
    },
    /** A new secret; the old one keeps signing for 24 h (both signatures are sent). */
    async rotateSecret(id: string): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
      const e = await mustFind(id);
      const secret = newSecret();
      const until = new Date(now().getTime() + ROTATION_OVERLAP_MS);
      await deps.repo.setSecrets(id, sealer().seal(secret), e.secret_sealed, until);
      log.info({ endpoint: id, previousUntil: until.toISOString() }, 'webhook secret rotated');
      return { endpoint: publicEndpoint({ ...e, previous_secret_expires_at: until.toISOString() }), secret };
    },
    async setEnabled(id: string, enabled: boolean): Promise<WebhookEndpoint> {
      await mustFind(id);
      await deps.repo.setEnabled(id, enabled, enabled ? null : 'disabled by the operator');
      return publicEndpoint(await mustFind(id));
    },
    /** Sends a `webhook.test` message now (not through the outbox) and answers what the receiver said; logged like any delivery. */
    async test(id: string): Promise<{ message_id: string; delivery: WebhookDelivery }> {
      const e = await mustFind(id);
      const at = now();
      const m = {
        id: `msg_${eventId()}`,
        payload: JSON.stringify({ type: 'webhook.test', timestamp: at.toISOString(), data: { webhook_id: e.id, message: 'Test delivery from Gatehouse' } }),
      };
      await deps.repo.insertMessage({
        ...m,
        endpoint_id: e.id,
        event_id: null,
        type: 'webhook.test',
        status: 'pending',
        next_attempt_at: new Date(at.getTime() + 3_600_000),
        created_at: at,
      });
      const r = await send(e, m, secretsOf(e));
      const status = r.ok ? 'delivered' : 'failed';
      const delivery = {
        id: `dlv_${eventId()}`,
        message_id: m.id,
        attempt: 1,
        at: now(),
        status_code: r.statusCode,
        duration_ms: Math.round(r.durationMs),
        error: r.error,
        response_body: r.responseBody,
      };
      await deps.repo.insertDelivery(delivery);
      await deps.repo.setMessageStatus(m.id, status, 1);
      deps.onOutcome?.(r.ok ? 'delivered' : 'failed');
      return { message_id: m.id, delivery: { ...delivery, at: delivery.at.toISOString(), type: 'webhook.test', message_status: status } };
    },
    async deliveries(id: string, limit = 50): Promise<WebhookDelivery[]> {
      await mustFind(id);
      return deps.repo.deliveries(id, Math.min(200, Math.max(1, limit)));
    },
    /** Sends a message again from the start of the schedule, with the same webhook-id; by message or delivery id. */
    async retry(id: string): Promise<WebhookMessage> {
      const messageId = id.startsWith('dlv_') ? await deps.repo.messageOfDelivery(id) : id;
      const m = messageId ? await deps.repo.findMessage(messageId) : null;
      if (!m) throw notFound(`No webhook message or delivery with the id ${id}`);
      if (m.status === 'pending')
        throw badRequest(`Message ${m.id} is still pending: it is tried again on its schedule`, [{ field: 'id', message: 'still pending' }]);
      await deps.repo.requeue(m.id, now());
      worker?.wake();
      const requeued = await deps.repo.findMessage(m.id);
      // Gone between the requeue and this read: its endpoint was deleted meanwhile.
      if (!requeued) throw notFound(`No webhook message or delivery with the id ${id}`);
      return requeued;
    },
    /** Runs the delivery worker in this process (serve; tests); stopped by `stopWorker` or the app's close. */
    startWorker(): void {
      worker ??= startWebhookWorker({
        repo: deps.repo,
        logger: deps.logger,
        instanceId: deps.instanceId,
        clock: now,
        schedule: deps.schedule,
        timeoutMs: deps.timeoutMs,
        secretsOf,
        send: (e, m, secrets, signal) => send(e, m, secrets, signal),
        onOutcome: deps.onOutcome,
        dbHealth: deps.dbHealth,
      });
    },
    async stopWorker(withinMs?: number): Promise<void> {
      const w = worker;
      worker = null;
      await w?.stop(withinMs);
    },
    /** Deletes delivery-log lines and finished messages older than `days` (with the audit events' retention). */
    async pruneWebhookLog(days: number, batch = 1000): Promise<number> {
      const before = new Date(now().getTime() - days * 86_400_000);
      // A batch deletes from two tables, so only an empty one says the log is done.
      let total = 0;
      for (let n = await deps.repo.pruneBatch(before, batch); n > 0; n = await deps.repo.pruneBatch(before, batch)) total += n;
      return total;
    },
    pendingStats: () => deps.repo.pendingStats(),
    disabledEndpoints: async () => (await deps.repo.disabledEndpoints()).map(publicEndpoint),
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
