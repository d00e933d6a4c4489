import type { Logger } from '../log/logger.js';
import type { Bus, Cache } from './cache.js';
import type { RedisClient } from './redis-client.js';

export function createRedisCache(client: RedisClient, prefix: string): Cache {
  return {
    kind: 'redis',
    async get(key) {
      return client.get(prefix + key);
    },
    async set(key, value, ttlSec) {
      await client.set(prefix + key, value, { expiration: { type: 'EX', value: Math.max(1, Math.round(ttlSec)) } });
    },
    async del(...keys) {
      if (keys.length) await client.del(keys.map((k) => prefix + k));
    },
  };
}

/** Redis pub/sub; subscribing needs a connection of its own, duplicated from the shared client. */
export async function createRedisBus(client: RedisClient, prefix: string, logger: Logger): Promise<Bus> {
  const sub = client.duplicate();
  sub.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis subscriber error'));
  await sub.connect();
  return {
    async publish(channel, message) {
      await client.publish(prefix + channel, JSON.stringify(message));
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
      if (sub.isOpen) await sub.quit();
    },
  };
}
