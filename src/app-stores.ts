import type { Config } from './config/schema.js';
import type { Bus, Cache, Store } from './cache/cache.js';
import { createMemoryBus, createMemoryCache } from './cache/memory-cache.js';
import { createRedisBus, createRedisCache, createRedisStore } from './cache/redis-cache.js';
import { closeRedisClient, connectRedis, type RedisClient } from './cache/redis-client.js';
import { RedisHealth } from './cache/redis-health.js';
import { createFallbackRateLimiter, createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from './limits/rate-limiter.js';
import { createLoginBackoff, type LoginBackoff } from './limits/login-backoff.js';
import type { Logger } from './log/logger.js';
import { withTimeout } from './with-timeout.js';

/** One step of closing the app: named for the debug log. */
export interface Closer {
  name: string;
  run: () => Promise<unknown>;
}
export const closer = (name: string, run: () => Promise<unknown>): Closer => ({ name, run });

/** Waits for one closing step at most `ms`; a step that fails or hangs is left behind (the process is ending). */
export const within = (step: Promise<unknown>, ms: number): Promise<void> =>
  withTimeout(step, ms).then(
    () => undefined,
    () => undefined,
  );

/** What instances share through Redis when it is configured, and keep in process otherwise. */
export interface SharedStores {
  redis: RedisClient | null;
  /** Whether Redis is usable right now (null without Redis). */
  redisHealth: RedisHealth | null;
  cache: Cache;
  /** Data kept only in Redis, where a fault must fail loudly (null without Redis: such data goes to the database). */
  store: Store | null;
  bus: Bus;
  limiter: RateLimiter;
  loginBackoff: LoginBackoff;
}

/**
 * Connects Redis (when configured) and builds the cache, the bus, the rate limiter and the login
 * backoff over it, or in process; their closing steps go first in `closers` (the bus before Redis).
 */
export async function openSharedStores(config: Config, logger: Logger, closers: Closer[]): Promise<SharedStores> {
  let redis: RedisClient | null = null;
  let redisHealth: RedisHealth | null = null;
  let cache: Cache;
  let store: Store | null = null;
  let bus: Bus;
  let limiter: RateLimiter;
  let loginBackoff: LoginBackoff;
  if (config.redisUrl) {
    const client = await connectRedis(config.redisUrl, logger, { commandTimeoutMs: config.redisCommandTimeoutMs });
    redis = client;
    const health = new RedisHealth(client, logger, config.redisCommandTimeoutMs);
    redisHealth = health;
    closers.unshift(
      closer('redis', async () => {
        health.stop();
        await closeRedisClient(client);
      }),
    );
    cache = createRedisCache(client, config.redisPrefix, health);
    store = createRedisStore(client, config.redisPrefix, health);
    bus = await createRedisBus(client, config.redisPrefix, logger, health);
    limiter = createFallbackRateLimiter(createRedisRateLimiter(client, config.redisPrefix), health);
    loginBackoff = createLoginBackoff({ client, prefix: config.redisPrefix, health });
  } else {
    cache = createMemoryCache();
    bus = createMemoryBus();
    limiter = createMemoryRateLimiter();
    loginBackoff = createLoginBackoff('memory');
  }
  closers.unshift(closer('bus', () => bus.close()));
  return { redis, redisHealth, cache, store, bus, limiter, loginBackoff };
}
