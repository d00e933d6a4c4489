import type { Logger } from './logger.js';

/*
 * The refusals' log (docs/operations.md, "The access log"; docs/rate-limits.md, "Refusals in the log").
 * A client past its budget is refused thousands of times a second, and a line per refusal made a flood
 * of 429s cost ten times an accepted validation (issue 52): the log was the work. So a rate-limit
 * refusal writes no access line of its own; it is counted here, per client address and limit class,
 * and each minute that had refusals gives one line per (address, class) with the count. The lines of
 * a minute are written when it closes (a timer at its end), when the first refusal of a later minute
 * comes, and on shutdown (flush). Memory is bounded: past `maxKeys` pairs in one minute, further pairs
 * are counted together in one more line. /metrics still counts every refusal
 * (gatehouse_rate_limited_total); this is only the log.
 */

export interface RefusalLog {
  /** Counts one refusal of `address` in the limit class `cls`. */
  refused(address: string, cls: string): void;
  /** Writes what is held of the current minute now (shutdown; a test closing the minute). */
  flush(): void;
  /** Flushes and stops the minute's timer. */
  close(): void;
}

export interface RefusalLogOptions {
  /** Now, in ms (the app's clock; tests move it). */
  now?: () => number;
  /** Most (address, class) pairs held in one minute; refusals of further pairs go to one line together. */
  maxKeys?: number;
}

export const REFUSAL_MINUTE_MS = 60_000;
export const DEFAULT_REFUSAL_KEYS = 10_000;
export const REFUSAL_MESSAGE = 'rate-limited requests';
export const REFUSAL_OVERFLOW_MESSAGE = 'rate-limited requests of further clients';

interface Count {
  address: string;
  cls: string;
  count: number;
}

/** Before a minute's end is taken as passed, a little slack for timers that fire early. */
const TIMER_SLACK_MS = 50;

export function createRefusalLog(logger: Logger, opts: RefusalLogOptions = {}): RefusalLog {
  const now = opts.now ?? Date.now;
  const maxKeys = opts.maxKeys ?? DEFAULT_REFUSAL_KEYS;
  const counts = new Map<string, Count>();
  /** Refusals of pairs beyond maxKeys in the minute. */
  let overflow = 0;
  /** The minute held (its start, ms), or -1 when nothing is held. */
  let minute = -1;
  let timer: NodeJS.Timeout | null = null;

  function flush(): void {
    if (minute < 0) return;
    const at = new Date(minute).toISOString();
    // Detached first: a logger that throws must not leave the minute half written and written again.
    const held = [...counts.values()];
    const extra = overflow;
    counts.clear();
    overflow = 0;
    minute = -1;
    if (timer) clearTimeout(timer);
    timer = null;
    for (const c of held) logger.info({ remoteAddress: c.address, limitClass: c.cls, count: c.count, minute: at }, REFUSAL_MESSAGE);
    if (extra > 0) logger.info({ count: extra, trackedClients: maxKeys, minute: at }, REFUSAL_OVERFLOW_MESSAGE);
  }

  /** At the held minute's end (by `now`): its lines, unless the clock says it has not ended (then later). */
  function schedule(): void {
    const left = minute + REFUSAL_MINUTE_MS - now();
    timer = setTimeout(
      () => {
        timer = null;
        if (minute < 0) return;
        if (now() >= minute + REFUSAL_MINUTE_MS) flush();
        else schedule();
      },
      Math.max(1_000, left + TIMER_SLACK_MS),
    );
    timer.unref();
  }

  return {
    refused(address, cls) {
      const t = now();
      const m = t - (t % REFUSAL_MINUTE_MS);
      if (m !== minute) {
        flush();
        minute = m;
        schedule();
      }
      const key = `${cls} ${address}`;
      const c = counts.get(key);
      if (c) c.count += 1;
      else if (counts.size < maxKeys) counts.set(key, { address, cls, count: 1 });
      else overflow += 1;
    },
    flush,
    close() {
      flush();
    },
  };
}
