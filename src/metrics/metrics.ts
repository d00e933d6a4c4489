import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestTally } from './request-tally.js';

/** `abandoned`: the caller closed the connection while the attempt waited for its bcrypt turn (nothing was checked). */
export type LoginOutcome = 'success' | 'failure' | 'pending_second_factor' | 'limited' | 'abandoned';
/** local: this process; shared: Redis; db: the database; miss: not local (users: Redis or database). */
export type CacheResult = 'local' | 'shared' | 'db' | 'miss';

/** Counts of one running app; every counting point is one explicit call on this object. */
export interface Metrics {
  readonly registry: Registry;
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  login(outcome: LoginOutcome): void;
  rateLimited(cls: string): void;
  /** Where a session or user lookup was answered from: this process, the shared cache (Redis), or the database. */
  cacheLookup(cache: 'session' | 'user', result: CacheResult): void;
  jobRun(job: string, ok: boolean): void;
  passwordHash(seconds: number): void;
  /** The database breaker opened (false) or closed (true): the up gauge, and one outage counted per opening. */
  databaseState(up: boolean): void;
  /** A request answered 503 because a dependency is down (`database`), counted instead of logged. */
  unavailableAnswer(cause: 'database'): void;
  /** One security event committed to the audit record (src/audit), by type. */
  auditEvent(type: string): void;
  /** One webhook attempt ended: delivered, failed with a retry scheduled, or failed for good. */
  webhookDelivery(outcome: 'delivered' | 'retry' | 'failed'): void;
  /** Gauges read at scrape time (active sessions, users), set by the composition root. */
  onScrape(fn: () => Promise<void>): void;
  /**
   * This process's metrics as JSON, for aggregation across workers. `gauges: false` skips the
   * database-read gauges (workers leave them to the primary: one count per scrape, not one per process).
   */
  json(opts?: { gauges?: boolean }): ReturnType<Registry['getMetricsAsJSON']>;
  /** Prometheus text of this process, or of every worker when a cluster collector is set. */
  scrape(): Promise<string>;
  /** In a `serve --workers N` worker: scrape asks the primary, which aggregates every process. */
  setCollector(fn: (() => Promise<string>) | null): void;
  readonly activeSessions: Gauge;
  readonly users: Gauge;
  /** Pending webhook messages, and the age of the oldest (read at scrape time). */
  readonly webhookOutboxDepth: Gauge;
  readonly webhookOldestPendingSeconds: Gauge;
}

// Login answers take tens of milliseconds (bcrypt); validation answers well under one.
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const HASH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2];

/** A registry of its own per app (tests run several apps in one process), with the process metrics. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Tallied per answer without prom-client's label hash (request-tally.ts), read at scrape time.
  const tally = new RequestTally(LATENCY_BUCKETS);
  tally.register(
    registry,
    { name: 'gatehouse_http_requests_total', help: 'HTTP requests by method, route template and status' },
    { name: 'gatehouse_http_request_duration_seconds', help: 'HTTP request latency by method and route template' },
  );
  const logins = new Counter({ name: 'gatehouse_logins_total', help: 'Login attempts by outcome', labelNames: ['outcome'], registers: [registry] });
  const limited = new Counter({
    name: 'gatehouse_rate_limited_total',
    help: 'Requests refused with 429, by rate-limit class',
    labelNames: ['class'],
    registers: [registry],
  });
  // Two lookups per validation: counted in place, handed to the counter at scrape time (as the requests).
  const pendingLookups: Record<'session' | 'user', Record<CacheResult, number>> = {
    session: { local: 0, shared: 0, db: 0, miss: 0 },
    user: { local: 0, shared: 0, db: 0, miss: 0 },
  };
  new Counter({
    name: 'gatehouse_cache_lookups_total',
    help: 'Session and user lookups by where they were answered: local (this process), shared (Redis), db, miss (user not in this process)',
    labelNames: ['cache', 'result'],
    registers: [registry],
    collect() {
      for (const cache of ['session', 'user'] as const) {
        for (const [result, n] of Object.entries(pendingLookups[cache])) {
          if (n > 0) this.inc({ cache, result }, n);
          pendingLookups[cache][result as CacheResult] = 0;
        }
      }
    },
  });
  const jobs = new Counter({
    name: 'gatehouse_job_runs_total',
    help: 'Background job runs by job and result',
    labelNames: ['job', 'result'],
    registers: [registry],
  });
  const hashes = new Histogram({
    name: 'gatehouse_bcrypt_duration_seconds',
    help: 'Time to hash or verify one password (bcrypt)',
    buckets: HASH_BUCKETS,
    registers: [registry],
  });
  const dbUp = new Gauge({
    name: 'gatehouse_database_up',
    help: '1 while the database answers, 0 during an outage (the breaker is open)',
    aggregator: 'min',
    registers: [registry],
  });
  dbUp.set(1);
  const dbOutages = new Counter({ name: 'gatehouse_database_outages_total', help: 'Database outages seen since start', registers: [registry] });
  const unavailable = new Counter({
    name: 'gatehouse_unavailable_responses_total',
    help: 'Requests answered 503 because a dependency was down, by cause',
    labelNames: ['cause'],
    registers: [registry],
  });
  // Read from the shared database by every process: aggregated with max, not summed over workers.
  const activeSessions = new Gauge({
    name: 'gatehouse_active_sessions',
    help: 'Sessions that are active and not expired (exact up to 100000, then estimated)',
    aggregator: 'max',
    registers: [registry],
  });
  const auditEvents = new Counter({
    name: 'gatehouse_audit_events_total',
    help: 'Security events written to the audit record, by type',
    labelNames: ['type'],
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: 'gatehouse_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, another try scheduled), failed (the last try failed)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const webhookOutboxDepth = new Gauge({
    name: 'gatehouse_webhook_outbox_pending',
    help: 'Webhook messages waiting for delivery',
    aggregator: 'max',
    registers: [registry],
  });
  const webhookOldestPendingSeconds = new Gauge({
    name: 'gatehouse_webhook_oldest_pending_seconds',
    help: 'Age of the oldest webhook message waiting for delivery (0 when none waits)',
    aggregator: 'max',
    registers: [registry],
  });
  const users = new Gauge({ name: 'gatehouse_users', help: 'User accounts (not deleted)', aggregator: 'max', registers: [registry] });

  const scrapeHooks: (() => Promise<void>)[] = [];
  let collector: (() => Promise<string>) | null = null;

  return {
    registry,
    activeSessions,
    users,
    webhookOutboxDepth,
    webhookOldestPendingSeconds,
    httpRequest(method, route, status, seconds) {
      tally.record(method, route, status, seconds);
    },
    login: (outcome) => logins.inc({ outcome }),
    rateLimited: (cls) => limited.inc({ class: cls }),
    cacheLookup: (cache, result) => void (pendingLookups[cache][result] += 1),
    jobRun: (job, ok) => jobs.inc({ job, result: ok ? 'ok' : 'failed' }),
    passwordHash: (seconds) => hashes.observe(seconds),
    databaseState(up) {
      dbUp.set(up ? 1 : 0);
      if (!up) dbOutages.inc();
    },
    unavailableAnswer: (cause) => unavailable.inc({ cause }),
    auditEvent: (type) => auditEvents.inc({ type }),
    webhookDelivery: (outcome) => webhookDeliveries.inc({ outcome }),
    onScrape: (fn) => void scrapeHooks.push(fn),
    async json(opts = {}) {
      if (opts.gauges !== false) await refresh(scrapeHooks);
      return registry.getMetricsAsJSON();
    },
    async scrape() {
      if (collector) return collector();
      await refresh(scrapeHooks);
      return registry.metrics();
    },
    setCollector(fn) {
      collector = fn;
    },
  };
}

/** Runs the scrape-time readers; a failing one (database down) leaves its gauge as it was. */
export async function refresh(hooks: (() => Promise<void>)[]): Promise<void> {
  await Promise.all(hooks.map((h) => h().catch(() => undefined)));
}
