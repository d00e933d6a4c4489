import { EventEmitter } from 'node:events';
import type { Logger } from '../log/logger.js';
import { isErrorReply, type RedisClient } from './redis-client.js';
import { withTimeout } from '../with-timeout.js';
import { OUTAGE_MESSAGE, unavailable } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';

/** After a failed command, calls skip Redis for this long instead of each waiting for its own timeout. */
const BREAKER_MS = 2_000;
/** The longest wait for a command whose data lives only in Redis (`runStrict`): a slow moment is not a loss. */
const STRICT_TIMEOUT_MS = 2_000;
/** What a client that could not be answered from Redis is asked to wait. */
export const REDIS_RETRY_AFTER_SEC = 5;

export interface RedisHealthStatus {
  up: boolean;
  /** When the current state began (ISO). */
  since: string;
  /** Outages seen since start. */
  outages: number;
}

/**
 * Tracks whether the shared Redis client can be used and runs Redis work with a fallback.
 *
 * Redis is an accelerator here, never the source of truth: sessions and users live in the database,
 * so while Redis is down every caller takes its fallback (cache miss, in-process limits) at once.
 * `recovered` fires when the client is ready again after an outage; listeners catch up on what
 * could not be shared meanwhile (missed invalidations).
 */
export class RedisHealth extends EventEmitter {
  private up = true;
  private since = new Date();
  private outages = 0;
  private skipUntil = 0;
  private stopped = false;

  constructor(
    private readonly client: Pick<RedisClient, 'isReady' | 'on'>,
    private readonly logger: Logger,
    /** node-redis times out a command only until it is written; this bounds the wait for the reply too. */
    private readonly timeoutMs = 500,
  ) {
    super();
    client.on('ready', () => this.markUp());
    client.on('end', () => this.markDown('connection closed'));
    client.on('error', (err: Error) => this.markDown(err.message));
  }

  /**
   * True when commands may be sent: connected and not inside a breaker window. A client that stayed
   * connected through failures (a stalled server) is tried again once the window ends.
   */
  available(): boolean {
    return this.client.isReady && Date.now() >= this.skipUntil;
  }

  status(): RedisHealthStatus {
    return { up: this.up && this.client.isReady, since: this.since.toISOString(), outages: this.outages };
  }

  /** Runs `op` on Redis, or `fallback` when Redis is down or the command fails or times out. */
  async run<T>(what: string, op: () => Promise<T>, fallback: () => T | Promise<T>): Promise<T> {
    if (!this.available()) return fallback();
    return this.attempt(what, op, this.timeoutMs, 'redis refused a command; using the fallback for it').catch(() => fallback());
  }

  /**
   * Runs `op` on Redis where its data has no other copy (the OpenID provider's interactions and codes):
   * no fallback, so a call that cannot be made fails with a 503 (Retry-After) instead of reading as a
   * miss or dropping a write. It waits for a connected client even inside the breaker's window (one slow
   * command must not lose a sign-in in progress), up to STRICT_TIMEOUT_MS.
   */
  async runStrict<T>(what: string, op: () => Promise<T>): Promise<T> {
    const outage = () => unavailable(OUTAGE_MESSAGE, Codes.SERVICE_UNAVAILABLE, REDIS_RETRY_AFTER_SEC);
    if (!this.client.isReady) throw outage();
    return this.attempt(what, op, Math.max(this.timeoutMs, STRICT_TIMEOUT_MS), 'redis refused a command whose data it alone holds').catch(() => {
      throw outage();
    });
  }

  /** One command with a timeout: a success ends an outage; a failure is recorded (an outage, or a refusal logged) and rethrown. */
  private async attempt<T>(what: string, op: () => Promise<T>, timeoutMs: number, refused: string): Promise<T> {
    try {
      const result = await withTimeout(op(), timeoutMs);
      if (!this.up) this.markUp();
      return result;
    } catch (err) {
      // Redis answered, with an error about this command's data (WRONGTYPE, a script error): that call
      // fails, but Redis is up and the next call uses it.
      if (isErrorReply(err)) this.logger.warn({ what, err: err.message }, refused);
      else this.failed(what, err);
      throw err;
    }
  }

  /** The app is closing its client on purpose: the connection ending is no outage. */
  stop(): void {
    this.stopped = true;
    this.removeAllListeners();
  }

  /** Records a failed command: opens the breaker and, on the first failure, reports the outage. */
  failed(what: string, err: unknown): void {
    this.skipUntil = Date.now() + BREAKER_MS;
    this.markDown(`${what}: ${(err as Error)?.message ?? String(err)}`);
  }

  private markDown(reason: string): void {
    if (!this.up || this.stopped) return;
    this.up = false;
    this.outages += 1;
    this.since = new Date();
    this.logger.error({ reason }, 'redis unavailable: serving from the database with in-process caches and rate limits until it returns');
    this.emit('down');
  }

  private markUp(): void {
    this.skipUntil = 0;
    if (this.up) return;
    this.up = true;
    this.since = new Date();
    this.logger.warn({ outages: this.outages }, 'redis is back: shared caches and rate limits resumed');
    this.emit('recovered');
  }
}
