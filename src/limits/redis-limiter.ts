import { defineRedisScript, LUA_NOW } from './redis-script.js';
import { assertRule, counterKey, toResult } from './limit-keys.js';
import type { LimitResult, LimitRule, RateLimiter, RedisClient } from './limit-types.js';

/**
 * KEYS[1] = window hash { c = count, r = reset ms }. ARGV[1] = now ms or '' (server time),
 * ARGV[2] = window ms, ARGV[3] = points. Read, increment and expiry happen inside one script,
 * so concurrent callers on any instance see one serial order. The reset time is stored once,
 * when the window opens, so every later call in the window reports the same resetAt.
 */
const CONSUME = defineRedisScript(`${LUA_NOW}
local reset = tonumber(redis.call('HGET', KEYS[1], 'r'))
local count
if (not reset) or reset <= now then
  reset = now + tonumber(ARGV[2])
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'c', 1, 'r', reset)
  redis.call('PEXPIREAT', KEYS[1], reset)
  count = 1
else
  count = tonumber(redis.call('HGET', KEYS[1], 'c')) or 0
  if count <= tonumber(ARGV[3]) then
    count = redis.call('HINCRBY', KEYS[1], 'c', 1)
  end
end
return { count, reset, now }
`);

/** KEYS[1] = window hash. Takes one hit back, never below zero, within the window that counted it. */
const REFUND = defineRedisScript(`
local c = tonumber(redis.call('HGET', KEYS[1], 'c'))
if c and c > 0 then redis.call('HINCRBY', KEYS[1], 'c', -1) end
return 0
`);

/** Shared fixed windows on Redis: every instance using the same prefix draws on one budget per key. */
export function createRedisRateLimiter(client: RedisClient, prefix: string): RateLimiter {
  return {
    async consume(bucket: string, key: string, rule: LimitRule): Promise<LimitResult> {
      assertRule(rule);
      const windowMs = String(Math.round(rule.durationSec * 1000));
      const reply = (await CONSUME.run(client, [counterKey(prefix, bucket, key)], ['', windowMs, String(rule.points)])) as number[];
      const [count, resetMs, nowMs] = reply.map(Number);
      return toResult(count, resetMs, nowMs, rule);
    },
    async reset(bucket: string, key: string): Promise<void> {
      await client.del(counterKey(prefix, bucket, key));
    },
    async refund(bucket: string, key: string): Promise<void> {
      await REFUND.run(client, [counterKey(prefix, bucket, key)], []);
    },
    // The client belongs to the app, which closes it.
    async close(): Promise<void> {},
  };
}
