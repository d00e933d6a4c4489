/** Settings shared by both backends, all in milliseconds. */
export interface BackoffSettings {
  freeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A reservation never followed by a record (crashed request) stops holding its slot after this. */
  reservationTtlMs: number;
  /** An account's failures are forgotten after this long without activity. */
  forgetAfterMs: number;
  now?: () => number;
}

/** Lock after `failures` consecutive failures: none before freeFailures, then base × 2^(extra), capped. */
export function lockDelayMs(failures: number, s: BackoffSettings): number {
  if (failures < s.freeFailures) return 0;
  return Math.min(s.maxDelayMs, s.baseDelayMs * 2 ** (failures - s.freeFailures));
}

/**
 * Attempts that may be in flight at once: the failures still free, and once those are used up,
 * a single probe after each lock, so a wave of parallel guesses gets one try per lock.
 */
export function attemptSlots(failures: number, s: BackoffSettings): number {
  return Math.max(1, s.freeFailures - failures);
}
