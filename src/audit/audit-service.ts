import { setTimeout as sleep } from 'node:timers/promises';
import type { Transaction } from 'sequelize';
import type { AuditRepository } from '../data/repositories/audit-repository.js';
import { afterCommit } from '../data/unit-of-work.js';
import { badRequest } from '../errors/app-error.js';
import type { Logger } from '../log/logger.js';
import { cleanDetails } from './audit-details.js';
import { currentAuditScope } from './audit-scope.js';
import type { AuditEvent, AuditFilters, AuditInput, AuditPage } from './audit-types.js';
import { eventId } from './event-id.js';
import { ExpiringMap, type Expiring } from '../limits/expiring-map.js';
import { CORE_AUDIT_TYPES } from './event-types.js';
import { matchesType } from './type-filter.js';

export interface AuditServiceDeps {
  repo: AuditRepository;
  /** Opens a unit of work for an event written outside one (its outbox rows commit with it). */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Types modules declare (their manifests' `auditEvents`), asked on each write: modules come and go. */
  moduleTypes(): ReadonlyMap<string, string>;
  logger: Logger;
  clock?: () => Date;
  /** Work after the answer (services/deferred-work.ts), for `recordLater`. */
  later(what: string, work: () => Promise<unknown>): void;
  /** Counts one written event (metrics). */
  onWritten?: (type: string) => void;
}

/** Runs inside the event's unit of work (the webhook outbox): a throw rolls the change back. */
export type InTransactionListener = (event: AuditEvent, tx: Transaction) => Promise<void>;
/** Runs once the event is committed (notifications, waking the webhook worker); failures are logged. */
export type CommittedListener = (event: AuditEvent) => Promise<void> | void;

export interface AuditService {
  /**
   * Writes one event in `tx` (the change it is about commits with it, or neither does), else in a unit
   * of work of its own. Source (actor, ip, agent, request id) from the running request's scope.
   */
  record(input: AuditInput, opts?: { tx?: Transaction | null }): Promise<AuditEvent>;
  /**
   * For what is not a change (a refused sign-in): written after the answer has gone, so its cost is no
   * timing signal, with the scope as it was when asked. Never throws; a failure is logged.
   * `oncePer` writes it once per key and source address within `ms` (a flood of refusals the limits
   * turn away cheaply must not become a flood of writes and webhook messages).
   */
  recordLater(input: AuditInput, opts?: { oncePer?: { key: string; ms: number } }): void;
  onRecord(listener: InTransactionListener): void;
  afterRecord(listener: CommittedListener): void;
  /** Newest first, with a keyset cursor; bad filters answer 400. */
  list(filters: AuditFilters): Promise<AuditPage>;
  /** Events of one type per time window [from, to) (the console's charts; repository `countBuckets`). */
  countBuckets(type: string, windows: readonly (readonly [Date, Date])[]): Promise<number[]>;
  /** Whether a type is declared now (core's or an installed module's). */
  knows(type: string): boolean;
  /** Every declared type with its description. */
  types(): Map<string, string>;
  /**
   * Deletes events older than `days`, `batch` at a time (each its own statement), at most `max` in one
   * call, resting `rest` times as long as a batch took after each (as the session-expiry job does, so a
   * backlog never holds a core); returns how many went.
   */
  prune(days: number, batch?: number, opts?: { max?: number; rest?: number }): Promise<number>;
  /** Events about a user, oldest first (the personal-data export). */
  exportFor(userId: string): Promise<AuditEvent[]>;
  /** Erasure: removes ip, agent and identifier from past events about the user, keeping the events. */
  anonymize(userId: string, identifiers: string[], opts?: { tx?: Transaction | null }): Promise<number>;
}

export const MAX_AUDIT_PAGE = 200;
export const DEFAULT_AUDIT_PAGE = 50;

const encodeCursor = (id: string) => Buffer.from(id, 'utf8').toString('base64url');
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!UUID_RE.test(id)) throw badRequest('cursor: not a cursor this query gave', [{ field: 'cursor', message: 'not a cursor this query gave' }]);
  return id;
}

export function createAuditService(deps: AuditServiceDeps): AuditService {
  const log = deps.logger.child({ component: 'audit' });
  const now = () => deps.clock?.() ?? new Date();
  const inTx: InTransactionListener[] = [];
  const committed: CommittedListener[] = [];
  // Bounded: a flood of distinct keys evicts the oldest (which then may be written once more).
  const recent = new ExpiringMap<Expiring>(10_000);

  function types(): Map<string, string> {
    const all = new Map<string, string>(Object.entries(CORE_AUDIT_TYPES));
    for (const [t, d] of deps.moduleTypes()) all.set(t, d);
    return all;
  }
  const knows = (type: string) => type in CORE_AUDIT_TYPES || deps.moduleTypes().has(type);

  function build(input: AuditInput, scope = currentAuditScope()): { event: AuditEvent; identifier: string | null } {
    if (!knows(input.type)) throw new Error(`audit: event type ${input.type} is not declared (core's catalogue or a module's auditEvents)`);
    const dropped: string[] = [];
    const details = cleanDetails(input.details, dropped);
    if (dropped.length) log.warn({ type: input.type, dropped }, 'audit details keys that may hold secrets were dropped');
    const identifier = typeof details.identifier === 'string' ? details.identifier.slice(0, 254) : null;
    const at = now();
    const event: AuditEvent = {
      id: eventId(at.getTime()),
      type: input.type,
      at: at.toISOString(),
      outcome: input.outcome ?? 'success',
      actor: input.actor !== undefined ? input.actor : (scope?.actor ?? null),
      user_id: input.userId ?? null,
      ip: scope?.ip?.slice(0, 64) ?? null,
      user_agent: scope?.userAgent?.slice(0, 512) ?? null,
      request_id: scope?.requestId?.slice(0, 128) ?? null,
      details,
    };
    return { event, identifier };
  }

  async function write(event: AuditEvent, identifier: string | null, tx: Transaction): Promise<void> {
    const details = { ...event.details };
    delete details.identifier;
    await deps.repo.insert({ ...event, at: new Date(event.at), identifier, details }, { tx });
    for (const l of inTx) await l(event, tx);
    await afterCommit(
      tx,
      async () => {
        deps.onWritten?.(event.type);
        for (const l of committed) await l(event);
      },
      (err) => log.error({ type: event.type, reason: (err as Error)?.message }, 'audit listener failed'),
    );
  }

  async function record(input: AuditInput, opts: { tx?: Transaction | null } = {}): Promise<AuditEvent> {
    const { event, identifier } = build(input);
    if (opts.tx) await write(event, identifier, opts.tx);
    else await deps.transaction((tx) => write(event, identifier, tx));
    return event;
  }

  return {
    record,
    recordLater(input, opts = {}) {
      let built: ReturnType<typeof build>;
      try {
        built = build(input);
      } catch (err) {
        log.error({ type: input.type, reason: (err as Error).message }, 'audit event not recorded');
        return;
      }
      if (opts.oncePer) {
        const key = `${input.type}|${opts.oncePer.key}|${built.event.ip ?? ''}`;
        const nowMs = Date.now();
        if (recent.get(key, nowMs)) return;
        recent.set(key, { expiresAtMs: nowMs + opts.oncePer.ms }, nowMs);
      }
      deps.later(`audit ${input.type}`, () => deps.transaction((tx) => write(built.event, built.identifier, tx)));
    },
    onRecord(listener) {
      inTx.push(listener);
    },
    afterRecord(listener) {
      committed.push(listener);
    },
    async list(filters) {
      const limit = Math.min(MAX_AUDIT_PAGE, Math.max(1, Math.trunc(filters.limit ?? DEFAULT_AUDIT_PAGE)));
      let typeList: string[] | undefined;
      if (filters.types?.length) {
        // Families expand to the declared types; an exact name is kept even when nothing declares it now (a removed module's events).
        const declared = [...types().keys()];
        typeList = [...new Set(filters.types.flatMap((t) => (t.endsWith('.*') ? declared.filter((d) => matchesType(d, t)) : [t])))];
      }
      const events = await deps.repo.list({
        userId: filters.userId,
        actorId: filters.actorId,
        types: typeList,
        outcome: filters.outcome,
        ip: filters.ip,
        since: filters.since,
        until: filters.until,
        beforeId: filters.cursor ? decodeCursor(filters.cursor) : undefined,
        limit: limit + 1,
      });
      const more = events.length > limit;
      const page = more ? events.slice(0, limit) : events;
      return { events: page, next_cursor: more ? encodeCursor(page[page.length - 1].id) : null };
    },
    countBuckets(type, windows) {
      return deps.repo.countBuckets(type, windows);
    },
    knows,
    types,
    async prune(days, batch = 1000, opts = {}) {
      const before = new Date(now().getTime() - days * 86_400_000);
      const max = opts.max ?? Number.MAX_SAFE_INTEGER;
      let total = 0;
      while (total < max) {
        const want = Math.min(batch, max - total);
        const started = performance.now();
        const n = await deps.repo.pruneBatch(before, want);
        total += n;
        if (n < want) break;
        if (opts.rest) await sleep((performance.now() - started) * opts.rest);
      }
      return total;
    },
    exportFor(userId) {
      return deps.repo.listByUser(userId);
    },
    anonymize(userId, identifiers, opts) {
      return deps.repo.anonymize(userId, identifiers, opts);
    },
  };
}
