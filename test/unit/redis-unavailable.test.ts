import { describe, expect, it } from 'vitest';
import { connectRedis, RedisUnavailableError } from '../../src/cache/redis-client.js';
import { createLogger } from '../../src/log/logger.js';

describe('Redis at start', () => {
  it('when REDIS_URL points nowhere, then start fails with one clear line and no password', async () => {
    const err = await connectRedis('redis://user:hunter2@127.0.0.1:1', createLogger('silent'), { connectTimeoutMs: 1000 }).catch((e) => e);
    expect(err).toBeInstanceOf(RedisUnavailableError);
    expect(err.message).toMatch(/^Redis is not reachable at redis:\/\/\*\*\*@127\.0\.0\.1:1 .*check REDIS_URL/);
    expect(err.message).not.toContain('hunter2');
    expect(err.message.split('\n')).toHaveLength(1);
  });
});
