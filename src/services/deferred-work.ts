import type { Logger } from '../log/logger.js';

/**
 * Work taken off the request path: it starts once the current answer has been written (setImmediate
 * runs after the I/O of this turn), so an answer costs the same whether or not there was work to do.
 * Account flows use it so that a request for a known address (token insert, mail rendering, sending)
 * takes as long as one for an unknown address. Failures are logged; `idle()` lets shutdown wait.
 */
export interface DeferredWork {
  /**
   * Runs `work` after the answer. Work given a `key` starts only once every earlier work of the same key
   * has finished, so one user's requests take effect in the order they were made: a newer link voids
   * the older one even when the older one's token is still being written (each issue voids, then inserts).
   */
  later(what: string, work: () => Promise<unknown>, key?: string): void;
  /** Resolves when everything scheduled so far has finished (or after `timeoutMs`). */
  idle(timeoutMs?: number): Promise<void>;
}

export function createDeferredWork(logger: Logger): DeferredWork {
  const pending = new Set<Promise<unknown>>();
  /** The last work scheduled for each key, while it runs or waits (it never rejects: failures are logged). */
  const last = new Map<string, Promise<void>>();
  return {
    later(what, work, key) {
      const before = key === undefined ? undefined : last.get(key);
      const p: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => before)
        .then(work)
        .then(
          () => undefined,
          (err: Error) => logger.error({ work: what, reason: err?.message }, 'background work failed'),
        )
        .finally(() => {
          pending.delete(p);
          if (key !== undefined && last.get(key) === p) last.delete(key);
        });
      pending.add(p);
      if (key !== undefined) last.set(key, p);
    },
    async idle(timeoutMs = 10_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)));
      // Work may schedule more work: wait until the set stays empty.
      while (pending.size) await Promise.race([Promise.allSettled([...pending]), timeout.then(() => pending.clear())]);
      clearTimeout(timer);
    },
  };
}

/** The key that orders one user's account-flow work (links and codes that void each other). */
export const accountWorkKey = (userId: string) => `account:${userId}`;
