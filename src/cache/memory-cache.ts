import { EventEmitter } from 'node:events';
import type { Bus, Cache } from './cache.js';
import { Lru } from './lru.js';

export function createMemoryCache(maxEntries = 50_000): Cache {
  const lru = new Lru<string>(maxEntries);
  return {
    kind: 'memory',
    async get(key) {
      return lru.get(key) ?? null;
    },
    async set(key, value, ttlSec) {
      lru.set(key, value, ttlSec * 1000);
    },
    async add(key, value, ttlSec) {
      if (lru.get(key) !== undefined) return false;
      lru.set(key, value, ttlSec * 1000);
      return true;
    },
    async del(...keys) {
      for (const k of keys) lru.delete(k);
    },
    async purge(keyPrefix) {
      return lru.deleteWhere((k) => k.startsWith(keyPrefix));
    },
  };
}

/** In-process bus: delivery is asynchronous like Redis, so callers can't depend on ordering tricks. */
export function createMemoryBus(): Bus {
  const ee = new EventEmitter();
  ee.setMaxListeners(100);
  return {
    async publish(channel, message) {
      queueMicrotask(() => ee.emit(channel, message));
    },
    async subscribe(channel, handler) {
      ee.on(channel, handler);
    },
    async close() {
      ee.removeAllListeners();
    },
  };
}
