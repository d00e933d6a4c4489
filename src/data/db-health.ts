import { EventEmitter } from 'node:events';
import type { Sequelize } from 'sequelize';
import type { Logger } from '../log/logger.js';
import { isDatabaseUnavailable, isLockBusy } from './db-errors.js';
import { withTimeout } from '../with-timeout.js';

/** Thrown at once, without touching the database, while an outage is known (the breaker is open). */
export class DatabaseUnavailableError extends Error {
  readonly code = 'DB_UNAVAILABLE';
  constructor(since: Date) {
    super(`database unavailable since ${since.toISOString()}`);
    this.name = 'DatabaseUnavailableError';
  }
}

export interface DatabaseHealthStatus {
  up: boolean;
  /** When the current state began (ISO). */
  since: string;
  outages: number;
}

export interface DatabaseHealthOptions {
  /**
   * One cheap round trip that proves the database usable again (for SQLite: that it can be written,
   * by taking the write lock on a connection of its own).
   */
  probe: () => Promise<void>;
  logger: Logger;
  /** Counted outages and refused calls, for /metrics. */
  onChange?: (up: boolean) => void;
  /** First probe this long after the failure, then backing off to `maxProbeMs`. */
  probeMs?: number;
  maxProbeMs?: number;
  probeTimeoutMs?: number;
}

/**
 * Whether the database is usable, as Redis's health is tracked beside it. The first call that fails
 * because the database is unreachable opens the breaker: from then on every query is refused at once
 * (so requests answer 503 in microseconds instead of each waiting on a dead connection, and jobs skip
 * their tick), one error line is logged, and a probe runs in the background until the database
 * answers again; then one line gives the outage's duration and `recovered` fires.
 */
export class DatabaseHealth extends EventEmitter {
  private up = true;
  private since = new Date();
  private outages = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private suspecting = false;
  /** This process's transactions past BEGIN (holding SQLite's write lock), and when the last one ended. */
  private writers = 0;
  private lastWriteEnd = 0;
  /** Failures already judged to be this process's own lock contention (see `contended`), not an outage. */
  private readonly contention = new WeakSet<object>();
  private readonly probeMs: number;
  private readonly maxProbeMs: number;
  private readonly probeTimeoutMs: number;

  constructor(private readonly opts: DatabaseHealthOptions) {
    super();
    this.probeMs = opts.probeMs ?? 250;
    this.maxProbeMs = opts.maxProbeMs ?? 500;
    this.probeTimeoutMs = opts.probeTimeoutMs ?? 2_000;
  }

  available(): boolean {
    return this.up;
  }

  /** When the outage under way began (ms since the epoch), or null while the database is up. */
  downSince(): number | null {
    return this.up ? null : this.since.getTime();
  }

  status(): DatabaseHealthStatus {
    return { up: this.up, since: this.since.toISOString(), outages: this.outages };
  }

  /** The error callers get while the breaker is open. */
  refusal(): DatabaseUnavailableError {
    return new DatabaseUnavailableError(this.since);
  }

  /**
   * Reports a failure; only one that means "unreachable" opens the breaker. Returns whether it did
   * count. `since`: when the failed call began, for telling this process's own lock contention from
   * an outage (see `contended`); a failure judged so once (by the guard) is never counted later.
   */
  observe(err: unknown, since?: number): boolean {
    if (!isDatabaseUnavailable(err)) return false;
    if (this.judgedContention(err) || (since !== undefined && this.contended(err, since))) return false;
    this.failed(err);
    return true;
  }

  /**
   * A transaction of this process got past its BEGIN (on SQLite it holds the write lock until it
   * ends); call the returned function once it has committed or rolled back.
   */
  writing(): () => void {
    this.writers += 1;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.writers -= 1;
      this.lastWriteEnd = Date.now();
    };
  }

  /**
   * Whether `err`, from a call or probe that began at `since`, is SQLite saying "locked" while this
   * process's own transaction held the write lock at some moment of the wait: contention between
   * this process's writers under load (the database is alive, busy), not another process keeping the
   * database from us. A lock held by nobody here, or by another process throughout, stays an outage.
   */
  private contended(err: unknown, since: number): boolean {
    if (!isLockBusy(err) || !(this.writers > 0 || this.lastWriteEnd >= since)) return false;
    if (err && typeof err === 'object') this.contention.add(err);
    return true;
  }

  private judgedContention(err: unknown): boolean {
    for (let e = err as Record<string, unknown> | undefined, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
      if (this.contention.has(e)) return true;
      e = (e.parent ?? e.original) as Record<string, unknown> | undefined;
    }
    return false;
  }

  failed(err: unknown): void {
    if (!this.up || this.stopped) return;
    this.up = false;
    this.outages += 1;
    this.since = new Date();
    this.opts.logger.error(
      { reason: (err as Error)?.message ?? String(err) },
      'database unavailable: answering 503 (cached sessions stay valid) until it returns',
    );
    this.opts.onChange?.(false);
    this.emit('down');
    this.schedule(this.probeMs);
  }

  /**
   * A call has been waiting unusually long: a database that went silent (a dropped network, an SQLite
   * file locked by another process) fails nothing for many seconds, each call waiting out its own
   * timeout. One probe tells whether it is down; if so, the breaker opens for everything after.
   */
  suspect(): void {
    if (!this.up || this.stopped || this.suspecting) return;
    this.suspecting = true;
    const started = Date.now();
    withTimeout(this.opts.probe(), this.probeTimeoutMs)
      .then(
        () => undefined,
        (err: unknown) => {
          // The probe's BEGIN IMMEDIATE waited on this process's own writer: alive, busy.
          if (this.contended(err, started)) this.opts.logger.debug('database probe: busy with this process\'s own writes, not an outage');
          else this.failed(err);
        },
      )
      .finally(() => (this.suspecting = false));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.removeAllListeners();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    // Unref'd: a probe never keeps a stopping process alive.
    this.timer = setTimeout(() => void this.probeOnce(ms), ms);
    this.timer.unref();
  }

  private async probeOnce(lastDelay: number): Promise<void> {
    this.timer = null;
    const started = Date.now();
    try {
      await withTimeout(this.opts.probe(), this.probeTimeoutMs);
    } catch (err) {
      // Locked by a transaction of this process: that one got the lock, so the database is back.
      if (!this.contended(err, started)) {
        this.schedule(Math.min(this.maxProbeMs, lastDelay * 2));
        return;
      }
    }
    if (this.stopped || this.up) return;
    const downMs = Date.now() - this.since.getTime();
    this.up = true;
    this.since = new Date();
    this.opts.logger.warn({ durationMs: downMs, outages: this.outages }, `database is back after ${(downMs / 1000).toFixed(1)} s: serving normally`);
    this.opts.onChange?.(true);
    this.emit('recovered');
  }
}

/** A call pending this long makes the health tracker probe (see `suspect`). */
const SLOW_MS = 2_000;

/**
 * Puts the breaker in front of every query and managed transaction of `sequelize`, and reports each
 * failure that means "unreachable". Returns the unguarded `query`, for the probe.
 */
export function guardDatabase(sequelize: Sequelize, health: DatabaseHealth, slowMs = SLOW_MS): Sequelize['query'] {
  // Both methods are replaced by wrappers that pass every argument through: their overloads cannot be
  // restated for a wrapper, so the instance is seen as holding two functions of any arguments.
  const target = sequelize as unknown as Record<'query' | 'transaction', (...args: unknown[]) => Promise<unknown>>;
  const query = target.query.bind(sequelize);
  const transaction = target.transaction.bind(sequelize);
  // Retries of a busy SQLite statement stop once the breaker opens: queued one behind the other on
  // the connection, twenty of them each would hold a request for many seconds more.
  // `options` is set by Sequelize's constructor; its type declarations leave it out.
  const retry = (sequelize as Sequelize & { options: { retry?: { match?: unknown[] } } }).options.retry;
  const busy = retry?.match?.filter((m): m is RegExp => m instanceof RegExp) ?? [];
  if (retry && busy.length) retry.match = [(err: Error) => health.available() && busy.some((m) => m.test(String(err?.message)))];
  // A slow statement inside a transaction of this process may be waiting on that very transaction's
  // own lock (a long migration): only calls outside transactions raise the suspicion.
  const watch = (p: Promise<unknown>, timed: boolean) => {
    const started = Date.now();
    const timer = timed ? setTimeout(() => health.suspect(), slowMs) : undefined;
    return p.then(
      (v) => (clearTimeout(timer), v),
      (err: unknown) => {
        clearTimeout(timer);
        health.observe(err, started);
        throw err;
      },
    );
  };
  target.query = (...args: unknown[]) =>
    health.available() ? watch(query(...args), !(args[1] as { transaction?: unknown } | undefined)?.transaction) : Promise.reject(health.refusal());
  target.transaction = (...args: unknown[]) => {
    // An unmanaged transaction (no callback) is begun through query(), which is guarded already.
    if (!health.available() && args.some((a) => typeof a === 'function')) return Promise.reject(health.refusal());
    // A managed transaction holds the write lock from its callback's start (BEGIN IMMEDIATE is done)
    // until it has ended: the spans the tracker tells own contention by (`writing`). An unmanaged one
    // (the migrator's dry run) is not counted.
    let ended: (() => void) | undefined;
    const begun = args.map((a) =>
      typeof a === 'function'
        ? (t: unknown) => {
            ended = health.writing();
            return (a as (t: unknown) => unknown)(t);
          }
        : a,
    );
    return watch(transaction(...begun), false).finally(() => ended?.());
  };
  return query as Sequelize['query'];
}
