import type { Logger } from '../log/logger.js';
import type { Bus, Cache, Store } from './cache.js';
import { closeRedisClient, type RedisClient } from './redis-client.js';
import type { RedisHealth } from './redis-health.js';

/**
 * The shared cache on Redis. While Redis is down a read is a miss and a write is skipped, so callers
 * go to the database; what could not be evicted meanwhile is purged when Redis returns (see
 * RedisHealth's `recovered`).
 */
export function createRedisCache(client: RedisClient, prefix: string, health: RedisHealth): Cache {
  return {
    kind: 'redis',
    get(key) {
      return health.run(
        'cache get',
        () => client.get(prefix + key),
        () => null,
      );
    },
    async set(key, value, ttlSec) {
      const ex = Math.max(1, Math.round(ttlSec));
      await health.run(
        'cache set',
        async () => void (await client.set(prefix + key, value, { expiration: { type: 'EX', value: ex } })),
        () => undefined,
      );
    },
    add(key, value, ttlSec) {
      const ex = Math.max(1, Math.round(ttlSec));
      return health.run(
        'cache add',
        async () => (await client.set(prefix + key, value, { condition: 'NX', expiration: { type: 'EX', value: ex } })) === 'OK',
        () => false,
      );
    },
    async del(...keys) {
      if (!keys.length) return;
      await health.run(
        'cache del',
        async () => void (await client.del(keys.map((k) => prefix + k))),
        () => undefined,
      );
    },
    async purge(keyPrefix) {
      return health.run(
        'cache purge',
        async () => {
          let n = 0;
          for await (const keys of client.scanIterator({ MATCH: `${prefix}${keyPrefix}*`, COUNT: 1000 })) {
            if (keys.length) n += await client.del(keys);
          }
          return n;
        },
        () => 0,
      );
    },
  };
}

/** The shared store on Redis (same client and prefix as the cache): every call reaches Redis or fails loudly. */
export function createRedisStore(client: RedisClient, prefix: string, health: RedisHealth): Store {
  return {
    get: (key) => health.runStrict('store get', () => client.get(prefix + key)),
    async set(key, value, ttlSec) {
      const ex = Math.max(1, Math.round(ttlSec));
      await health.runStrict('store set', () => client.set(prefix + key, value, { expiration: { type: 'EX', value: ex } }));
    },
    async add(key, value, ttlSec) {
      const ex = Math.max(1, Math.round(ttlSec));
      return (await health.runStrict('store add', () => client.set(prefix + key, value, { condition: 'NX', expiration: { type: 'EX', value: ex } }))) === 'OK';
    },
    async del(key) {
      await health.runStrict('store del', () => client.del(prefix + key));
    },
  };
}

/**
 * Redis pub/sub; subscribing needs a connection of its own, duplicated from the shared client.
 * A message that cannot be published while Redis is down is dropped (with the outage logged once):
 * the receivers catch up when Redis returns, and local copies expire within a minute regardless.
 */
export async function createRedisBus(client: RedisClient, prefix: string, logger: Logger, health: RedisHealth): Promise<Bus> {
  const sub = client.duplicate();
  sub.on('error', () => undefined);
  await sub.connect();
  return {
    async publish(channel, message) {
      await health.run(
        'publish',
        async () => void (await client.publish(prefix + channel, JSON.stringify(message))),
        () => undefined,
      );
    },
    async subscribe(channel, handler) {
      await sub.subscribe(prefix + channel, (raw: string) => {
        try {
          handler(JSON.parse(raw));
        } catch (err) {
          logger.warn({ err: (err as Error).message, channel }, 'bad bus message');
        }
      });
    },
    async close() {
      await closeRedisClient(sub);
    },
  };
}
