import { fail, ok, oneLine, safeUrl, type Check } from './check.js';

export const redisCheck: Check = {
  id: 'redis',
  title: 'Redis reachable',
  category: 'storage',
  preflight: ['init', 'serve'],
  async run(ctx) {
    const config = ctx.requireConfig();
    if (!config.redisUrl) return ok('not configured: cache, rate limits and pub/sub are in-process');
    const { connectRedis } = await import('../../cache/redis-client.js');
    try {
      const client = await connectRedis(config.redisUrl, ctx.logger);
      try {
        await client.ping();
      } finally {
        await client.quit().catch(() => client.destroy());
      }
      return ok(safeUrl(config.redisUrl));
    } catch (err) {
      return fail(oneLine((err as Error).message), 'check REDIS_URL and that Redis is running');
    }
  },
};
