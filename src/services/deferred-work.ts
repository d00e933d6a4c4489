import type { Logger } from '../log/logger.js';

/**
 * Work taken off the request path: it starts once the current answer has been written (setImmediate
 * runs after the I/O of this turn), so an answer costs the same whether or not there was work to do.
 * Account flows use it so that a request for a known address (token insert, mail rendering, sending)
 * takes as long as one for an unknown address. Failures are logged; `idle()` lets shutdown wait.
 */
export interface DeferredWork {
  later(what: string, work: () => Promise<unknown>): void;
  /** Resolves when everything scheduled so far has finished (or after `timeoutMs`). */
  idle(timeoutMs?: number): Promise<void>;
}

export function createDeferredWork(logger: Logger): DeferredWork {
  const pending = new Set<Promise<unknown>>();
  return {
    later(what, work) {
      const p = new Promise<void>((resolve) => setImmediate(resolve))
        .then(work)
        .catch((err: Error) => logger.error({ work: what, reason: err?.message }, 'background work failed'))
        .finally(() => pending.delete(p));
      pending.add(p);
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
