import type { createClient } from 'redis';
import type { Logger } from '../log/logger.js';

export type RedisClient = ReturnType<typeof createClient>;

/**
 * node-redis, imported when the first client connects: a process without REDIS_URL (the embedded
 * default, and most CLI commands) never loads it, about a tenth of a second of every start.
 */
let redisModule: typeof import('redis') | null = null;

/** Whether `err` is a Redis server's error reply (only a connected client, hence a loaded module, gets one). */
export function isErrorReply(err: unknown): err is Error {
  return redisModule !== null && err instanceof redisModule.ErrorReply;
}

/** Raised when REDIS_URL is set but Redis can't be reached at start. */
export class RedisUnavailableError extends Error {}

export interface RedisClientOptions {
  connectTimeoutMs?: number;
  /** Longest wait for one command (REDIS_COMMAND_TIMEOUT_MS). */
  commandTimeoutMs?: number;
}

/**
 * Connects the one Redis client the app shares (cache, rate limits, publishing). A failed first
 * connection is reported in one line instead of an endless reconnect loop.
 *
 * Once running, Redis may go away at any time, and no request may wait on it: commands are refused
 * at once while disconnected (no offline queue, which would hold every request and grow without
 * bound), every command has a timeout, and a ping every second with a socket timeout notices a
 * server that stopped answering without closing the connection.
 */
export async function connectRedis(url: string, logger: Logger, opts: RedisClientOptions = {}): Promise<RedisClient> {
  const connectTimeoutMs = opts.connectTimeoutMs ?? 3000;
  const { createClient } = (redisModule ??= await import('redis'));
  const client = createClient({
    url,
    disableOfflineQueue: true,
    commandsQueueMaxLength: 10_000,
    pingInterval: 1000,
    commandOptions: { timeout: opts.commandTimeoutMs ?? 500 },
    socket: {
      connectTimeout: connectTimeoutMs,
      socketTimeout: 5000,
      reconnectStrategy: (retries) => Math.min(100 + retries * 200, 2000),
    },
  });
  // Errors are reported by RedisHealth (once per outage); without a listener node-redis would throw.
  client.on('error', () => undefined);
  try {
    await Promise.race([client.connect(), new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), connectTimeoutMs))]);
  } catch (err) {
    client.destroy();
    const safeUrl = url.replace(/\/\/[^@]*@/, '//***@');
    throw new RedisUnavailableError(`Redis is not reachable at ${safeUrl} (${(err as Error).message}); check REDIS_URL or start Redis.`);
  }
  return client;
}

/**
 * Closes a client within `ms` whatever the state of Redis: a connected client is asked to quit (its
 * pending replies arrive first); a disconnected one, or one that does not answer in time, is
 * destroyed, which also ends its reconnect timer. `quit()` on a disconnected client never settles.
 */
export async function closeRedisClient(client: Pick<RedisClient, 'isOpen' | 'isReady' | 'close' | 'destroy'>, ms = 1_000): Promise<void> {
  if (!client.isOpen) return;
  if (client.isReady) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([client.close().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }
  if (client.isOpen) client.destroy();
}
