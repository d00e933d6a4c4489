import { createClient } from 'redis';
import type { Logger } from '../log/logger.js';

export type RedisClient = ReturnType<typeof createClient>;

/** Raised when REDIS_URL is set but Redis can't be reached at start. */
export class RedisUnavailableError extends Error {}

/**
 * Connects the one Redis client the app shares (cache, rate limits, publishing). A failed first
 * connection is reported in one line instead of an endless reconnect loop.
 */
export async function connectRedis(url: string, logger: Logger, connectTimeoutMs = 3000): Promise<RedisClient> {
  const client = createClient({
    url,
    socket: {
      connectTimeout: connectTimeoutMs,
      reconnectStrategy: (retries) => Math.min(retries * 200, 3000),
    },
  });
  let connected = false;
  client.on('error', (err: Error) => {
    if (connected) logger.warn({ err: err.message }, 'redis connection error');
  });
  try {
    await Promise.race([
      client.connect(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), connectTimeoutMs)),
    ]);
  } catch (err) {
    client.destroy();
    const safeUrl = url.replace(/\/\/[^@]*@/, '//***@');
    throw new RedisUnavailableError(`Redis is not reachable at ${safeUrl} (${(err as Error).message}); check REDIS_URL or start Redis.`);
  }
  connected = true;
  return client as RedisClient;
}
