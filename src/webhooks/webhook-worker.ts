import type { Logger } from '../log/logger.js';
import { eventId } from '../audit/event-id.js';
import type { AfterAttempt, WebhookRepository } from './webhook-repository.js';
import type { AttemptResult, EndpointRow, WebhookMessage } from './webhook-types.js';

/** An endpoint failing every attempt this long is switched off. */
export const DISABLE_AFTER_MS = 5 * 86_400_000;
const POLL_MS = 1_000;
const BATCH = 10;
const CONCURRENCY = 4;

export interface WorkerDeps {
  repo: WebhookRepository;
  logger: Logger;
  instanceId: string;
  clock: () => Date;
  /** Seconds before each attempt (WEBHOOK_RETRY_SCHEDULE): [0] the first, [n] the one after the n-th failure. */
  schedule: readonly number[];
  timeoutMs: number;
  /** The endpoint's secrets opened (current first), for signing. */
  secretsOf(endpoint: EndpointRow): string[];
  send(endpoint: EndpointRow, message: WebhookMessage, secrets: string[], signal: AbortSignal): Promise<AttemptResult>;
  onOutcome?(outcome: 'delivered' | 'retry' | 'failed'): void;
  /** The database breaker: while it is open the worker skips its polls (the outage is logged once, by the tracker). */
  dbHealth?: { available(): boolean; observe(err: unknown): boolean };
}

export interface WebhookWorker {
  /** Looks for due messages now (after an event committed) instead of at the next poll. */
  wake(): void;
  /** Stops polling, aborts requests in flight (their leases lapse: they are tried again) and waits for them, at most `withinMs`. */
  stop(withinMs?: number): Promise<void>;
}

/** What comes after the `attempts`-th failed attempt: a later try, or failed once the schedule is spent. */
export function afterFailure(attempts: number, schedule: readonly number[], now: Date): AfterAttempt {
  if (attempts >= schedule.length) return { status: 'failed' };
  return { status: 'pending', next: new Date(now.getTime() + schedule[attempts] * 1000) };
}

/**
 * The delivery loop: at least once. A message is claimed with a lease (the timeout plus a margin) so
 * that one attempt runs at a time across instances, and a crash mid-attempt only delays it: the lease
 * lapses and the message is claimed again with the same webhook-id.
 */
export function startWebhookWorker(deps: WorkerDeps): WebhookWorker {
  const log = deps.logger.child({ component: 'webhooks' });
  const leaseMs = deps.timeoutMs + 5_000;
  const abort = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let looping: Promise<void> | null = null;
  let again = false;

  async function attempt(m: WebhookMessage): Promise<void> {
    const endpoint = await deps.repo.findEndpoint(m.endpoint_id);
    if (!endpoint) return; // removed meanwhile: its messages went with it
    const now = deps.clock();
    if (!endpoint.enabled) {
      await deps.repo.finishAttempt(
        deps.instanceId,
        {
          id: `dlv_${eventId()}`,
          message_id: m.id,
          attempt: m.attempts,
          at: now,
          status_code: null,
          duration_ms: 0,
          error: 'endpoint disabled',
          response_body: null,
        },
        { status: 'failed' },
      );
      return;
    }
    let secrets: string[] | null = null;
    try {
      secrets = deps.secretsOf(endpoint);
    } catch (err) {
      // The server secret changed since the endpoint was registered: a failed attempt, not a crash loop.
      log.error({ endpoint: endpoint.id, err: (err as Error).message }, 'webhook secret cannot be opened; rotate it (gatehouse webhook rotate-secret)');
    }
    const result: AttemptResult = secrets
      ? await deps.send(endpoint, m, secrets, abort.signal)
      : { ok: false, statusCode: null, durationMs: 0, error: 'the signing secret cannot be opened with this server secret', responseBody: null };
    if (result.aborted) return;
    const at = deps.clock();
    const after: AfterAttempt = result.ok ? { status: 'delivered' } : afterFailure(m.attempts, deps.schedule, at);
    await deps.repo.finishAttempt(
      deps.instanceId,
      {
        id: `dlv_${eventId()}`,
        message_id: m.id,
        attempt: m.attempts,
        at,
        status_code: result.statusCode,
        duration_ms: Math.round(result.durationMs),
        error: result.error,
        response_body: result.responseBody,
      },
      after,
    );
    deps.onOutcome?.(result.ok ? 'delivered' : after.status === 'failed' ? 'failed' : 'retry');
    await deps.repo.noteOutcome(endpoint.id, result.ok, at);
    if (result.ok) return;
    log[after.status === 'failed' ? 'warn' : 'info'](
      {
        endpoint: endpoint.id,
        message: m.id,
        attempt: m.attempts,
        status: result.statusCode,
        error: result.error,
        next: after.status === 'pending' ? after.next : null,
      },
      after.status === 'failed' ? 'webhook message failed after its last attempt' : 'webhook attempt failed; will retry',
    );
    const since = endpoint.failing_since ? new Date(endpoint.failing_since).getTime() : at.getTime();
    if (at.getTime() - since >= DISABLE_AFTER_MS) {
      const reason = `every delivery failed since ${new Date(since).toISOString()} (5 days); last: ${result.error ?? 'no answer'}`;
      await deps.repo.setEnabled(endpoint.id, false, reason.slice(0, 500));
      const failed = await deps.repo.failPending(endpoint.id);
      log.error({ endpoint: endpoint.id, origin: new URL(endpoint.url).origin, failedMessages: failed }, `webhook endpoint disabled: ${reason}`);
    }
  }

  function track(p: Promise<void>) {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }

  async function loop(): Promise<void> {
    do {
      again = false;
      while (!stopped) {
        const room = CONCURRENCY - inFlight.size;
        if (room <= 0) {
          await Promise.race(inFlight);
          continue;
        }
        const now = deps.clock();
        const claimed = await deps.repo.claim(deps.instanceId, now, new Date(now.getTime() + leaseMs), Math.min(BATCH, room));
        if (!claimed.length) break;
        for (const m of claimed) {
          track(
            attempt(m).catch((err: Error) => {
              if (!stopped && !deps.dbHealth?.observe(err))
                log.error({ message: m.id, err: err.message }, 'webhook attempt could not be recorded; its lease will lapse and it is tried again');
            }),
          );
        }
      }
    } while (again && !stopped);
  }

  function tick() {
    if (stopped || deps.dbHealth?.available() === false) return;
    if (looping) {
      again = true;
      return;
    }
    looping = loop()
      .catch((err: Error) => {
        // An outage is the health tracker's to log (once); anything else is worth a line.
        if (!stopped && !deps.dbHealth?.observe(err)) log.warn({ err: err.message }, 'webhook worker could not read the outbox; trying again shortly');
      })
      .finally(() => {
        looping = null;
      });
  }

  timer = setInterval(tick, POLL_MS);
  timer.unref();
  tick();

  return {
    wake: tick,
    async stop(withinMs = 5_000) {
      if (stopped) return;
      stopped = true;
      if (timer) clearInterval(timer);
      abort.abort();
      let t: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([looping, ...inFlight]),
        new Promise((r) => {
          t = setTimeout(r, withinMs);
          t.unref();
        }),
      ]);
      clearTimeout(t);
    },
  };
}
