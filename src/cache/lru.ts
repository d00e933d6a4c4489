/** A small in-process LRU with per-entry expiry; bounded so memory stays flat under many keys. */
export class Lru<V> {
  private readonly map = new Map<string, { value: V; expiresAt: number }>();
  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The live value; `aging` is told when it has less than `within` ms left (a chance to renew it before it goes). */
  get(key: string, aging?: { within: number; renew(key: string): void }): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    const now = this.now();
    if (e.expiresAt <= now) {
      this.map.delete(key);
      return undefined;
    }
    if (aging && e.expiresAt - now < aging.within) aging.renew(key);
    // Re-insert to mark as most recently used.
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.map.delete(key);
    this.map.set(key, { value, expiresAt: this.now() + ttlMs });
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
