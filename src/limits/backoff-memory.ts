import { ExpiringMap } from './expiring-map.js';
import { shortKey } from './limit-keys.js';
import { attemptSlots, lockDelayMs, type BackoffSettings } from './backoff-rules.js';
import type { BackoffDecision, LoginBackoff } from './limit-types.js';

interface AccountState {
  failures: number;
  lockedUntilMs: number;
  pending: number;
  pendingUntilMs: number;
  expiresAtMs: number;
}

const MAX_ACCOUNTS = 100_000;

/** In-process backoff: every method finishes its state change before its promise is created, so calls never interleave. */
export function createMemoryBackoff(s: BackoffSettings): LoginBackoff {
  const now = s.now ?? Date.now;
  const accounts = new ExpiringMap<AccountState>(MAX_ACCOUNTS);

  function load(account: string, t: number): AccountState {
    const id = shortKey(account);
    let st = accounts.get(id, t);
    if (!st) {
      st = { failures: 0, lockedUntilMs: 0, pending: 0, pendingUntilMs: 0, expiresAtMs: t + s.forgetAfterMs };
      accounts.set(id, st, t);
    }
    if (st.pendingUntilMs <= t) st.pending = 0;
    return st;
  }

  return {
    async reserve(account: string): Promise<BackoffDecision> {
      const t = now();
      const st = load(account, t);
      if (st.lockedUntilMs > t) {
        return { allowed: false, retryAfterSec: Math.ceil((st.lockedUntilMs - t) / 1000), failures: st.failures };
      }
      // Refused only until the attempts in flight report back, which takes about one password check.
      if (st.pending >= attemptSlots(st.failures, s)) return { allowed: false, retryAfterSec: 1, failures: st.failures };
      st.pending += 1;
      st.pendingUntilMs = t + s.reservationTtlMs;
      st.expiresAtMs = t + s.forgetAfterMs;
      return { allowed: true, retryAfterSec: 0, failures: st.failures };
    },
    async recordFailure(account: string): Promise<void> {
      const t = now();
      const st = load(account, t);
      st.failures += 1;
      st.pending = Math.max(0, st.pending - 1);
      const delay = lockDelayMs(st.failures, s);
      if (delay > 0) st.lockedUntilMs = t + delay;
      st.expiresAtMs = t + s.forgetAfterMs;
    },
    async recordSuccess(account: string): Promise<void> {
      accounts.delete(shortKey(account));
    },
    async release(account: string): Promise<void> {
      const st = load(account, now());
      st.pending = Math.max(0, st.pending - 1);
    },
  };
}
