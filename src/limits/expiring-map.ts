/** An entry that may be dropped once `expiresAtMs` has passed. */
export interface Expiring {
  expiresAtMs: number;
}

const SWEEP_EVERY_MS = 60_000;

/**
 * A Map with bounded memory for the in-process backends: expired entries are swept now and then,
 * and when the cap is reached the oldest entries go first. Evicting a live entry forgets its
 * count, which is the price of not letting a flood of distinct keys exhaust the process.
 */
export class ExpiringMap<V extends Expiring> {
  private readonly entries = new Map<string, V>();
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly maxKeys: number) {
    if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new TypeError(`maxKeys must be a positive integer, got ${maxKeys}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string, nowMs: number): V | undefined {
    this.maybeSweep(nowMs);
    const entry = this.entries.get(key);
    if (entry && entry.expiresAtMs <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: string, value: V, nowMs: number): void {
    // Deleting first moves a renewed key to the young end of the eviction order.
    this.entries.delete(key);
    if (this.entries.size >= this.maxKeys) this.makeRoom(nowMs);
    this.entries.set(key, value);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  private maybeSweep(nowMs: number): void {
    if (nowMs - this.lastSweepMs >= SWEEP_EVERY_MS) this.sweep(nowMs);
  }

  private sweep(nowMs: number): void {
    this.lastSweepMs = nowMs;
    for (const [key, entry] of this.entries) if (entry.expiresAtMs <= nowMs) this.entries.delete(key);
  }

  private makeRoom(nowMs: number): void {
    // A full sweep is O(n); under a flood of live keys it would run on every insert, so at most once a second.
    if (nowMs - this.lastSweepMs >= 1000) this.sweep(nowMs);
    for (const key of this.entries.keys()) {
      if (this.entries.size < this.maxKeys) break;
      this.entries.delete(key);
    }
  }
}
