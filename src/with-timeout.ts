/**
 * `p`, or a rejection ("no answer within N ms") once `ms` have passed; a late settlement of `p` is ignored.
 *
 * A timer that fires after this process itself stalled (a long GC, a busy CPU) may find the answer already
 * waiting in a socket: timers run before I/O in the event loop, so the answer would lose to its own timeout.
 * The timeout therefore gives I/O one more turn (setImmediate runs after the poll phase) before it rejects,
 * so a stall of ours is not taken for a silent peer.
 */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  p.catch(() => undefined);
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      immediate = setImmediate(() => reject(new Error(`no answer within ${ms} ms`)));
    }, ms);
  });
  return Promise.race([p, late]).finally(() => {
    clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
  });
}
