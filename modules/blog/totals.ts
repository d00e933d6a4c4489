/**
 * Totals of large lists, kept for a few seconds. Counting 100,000 visible posts costs more than the
 * page itself, on every request of the busiest list; a total above LARGE may lag by up to TTL_MS,
 * smaller ones are always exact.
 */
const LARGE = 10_000;
const TTL_MS = 10_000;
const MAX_ENTRIES = 500;

type Entry = { total: number; until: number };
const caches = new WeakMap<object, Map<string, Entry>>();

/** `owner` scopes the cache (one per app context, so two databases in one process never share totals). */
export async function cachedTotal(owner: object, key: string, count: () => Promise<number>): Promise<number> {
  let cache = caches.get(owner);
  if (!cache) caches.set(owner, (cache = new Map()));
  const now = Date.now();
  const hit = cache.get(key);
  if (hit && hit.until > now) return hit.total;
  const total = await count();
  if (total >= LARGE) {
    const oldest = cache.keys().next();
    if (cache.size >= MAX_ENTRIES && !oldest.done) cache.delete(oldest.value);
    cache.set(key, { total, until: now + TTL_MS });
  } else cache.delete(key);
  return total;
}

/** After a post changes on this instance its totals are counted afresh (other instances: within TTL_MS). */
export function forgetTotals(owner: object): void {
  caches.delete(owner);
}
