interface Entry<V> {
  value: V;
  expiresAt: number;
  /** `moves` when the entry last went to the newest end. */
  movedAt: number;
}

/**
 * A small in-process LRU with per-entry expiry; bounded so memory stays flat under many keys.
 *
 * A read moves its entry to the newest end only when at least half the capacity of entries has gone
 * there since it last did (lazy promotion). An entry read at least that often is never evicted, as
 * with a strict LRU; a hot entry read thousands of times a second is not deleted and re-added on
 * each read. Each delete-and-add on a Map that has lived long enough to be in V8's old generation
 * makes the Map rebuild its table there every few operations: on the validation path that was about
 * 650 bytes of old-generation garbage per request, a full mark-compact every few seconds under load,
 * and its pauses were the p99 (bench/results/old-space-churn-*.txt).
 */
export class Lru<V> {
  private readonly map = new Map<string, Entry<V>>();
  /** Entries moved to the newest end so far (added or promoted). */
  private moves = 0;
  private readonly promoteAfter: number;
  /**
   * `lingerMs`: an expired entry stays this long after its end (not served, unless held: see `get`)
   * before a read deletes it; the capacity bounds memory all the same.
   */
  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
    private readonly lingerMs = 0,
  ) {
    this.promoteAfter = Math.max(1, Math.ceil(maxEntries / 2));
  }

  /**
   * The live value; `aging` is told when it has less than `within` ms left (a chance to renew it before
   * it goes; an entry served past its end by `hold` has none left). `hold`: an entry that ended after
   * `from` (still lingering) is served until `until` as if live.
   */
  get(key: string, aging?: { within: number; renew(key: string): void }, hold?: { from: number; until: number }): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    const now = this.now();
    if (e.expiresAt <= now && !(hold && e.expiresAt > hold.from && now < hold.until)) {
      if (now - e.expiresAt >= this.lingerMs) this.map.delete(key);
      return undefined;
    }
    if (aging && e.expiresAt - now < aging.within) aging.renew(key);
    // Left in place while fewer than promoteAfter entries have moved past it: it is far from eviction.
    if (this.moves - e.movedAt >= this.promoteAfter) {
      this.map.delete(key);
      this.map.set(key, e);
      e.movedAt = ++this.moves;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.map.delete(key);
    this.map.set(key, { value, expiresAt: this.now() + ttlMs, movedAt: ++this.moves });
    while (this.map.size > this.maxEntries) {
      const oldest = this.map.keys().next().value as string;
      this.map.delete(oldest);
    }
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  /** Deletes the entries whose key matches; returns how many. */
  deleteWhere(match: (key: string) => boolean): number {
    let n = 0;
    for (const key of [...this.map.keys()]) {
      if (match(key)) {
        this.map.delete(key);
        n += 1;
      }
    }
    return n;
  }

  /** A snapshot of the keys held (expired ones included until next touched). */
  keys(): string[] {
    return [...this.map.keys()];
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
