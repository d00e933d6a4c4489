import { createHash } from 'node:crypto';
import { defineRedisScript, LUA_NOW } from './redis-script.js';
import type { BackoffSettings } from './backoff-rules.js';
import type { BackoffDecision, LoginBackoff, RedisClient } from './limit-types.js';

/*
 * KEYS[1] = account hash { f = consecutive failures, l = locked until ms, p = reservations in flight,
 * pu = when those reservations lapse }. ARGV[1] = now ms or '' (server time).
 * The same rules as backoff-memory.ts and attemptSlots()/lockDelayMs() in backoff-rules.ts, in Lua
 * so that check and reservation are one atomic step for all instances.
 */
const LOAD_STATE = `
local s = redis.call('HMGET', KEYS[1], 'f', 'l', 'p', 'pu')
local f = tonumber(s[1]) or 0
local locked = tonumber(s[2]) or 0
local p = tonumber(s[3]) or 0
if (tonumber(s[4]) or 0) <= now then p = 0 end
`;

/** ARGV[2] = free failures, ARGV[3] = reservation ttl ms, ARGV[4] = forget after ms. Returns { allowed, retry ms, failures }. */
const RESERVE = defineRedisScript(`${LUA_NOW}${LOAD_STATE}
if locked > now then return { 0, locked - now, f } end
local slots = tonumber(ARGV[2]) - f
if slots < 1 then slots = 1 end
if p >= slots then return { 0, 1000, f } end
redis.call('HSET', KEYS[1], 'p', p + 1, 'pu', now + tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return { 1, 0, f }
`);

/** ARGV[2] = free failures, ARGV[3] = base delay ms, ARGV[4] = max delay ms, ARGV[5] = forget after ms. */
const FAILURE = defineRedisScript(`${LUA_NOW}${LOAD_STATE}
f = f + 1
if p > 0 then p = p - 1 end
redis.call('HSET', KEYS[1], 'f', f, 'p', p)
local free = tonumber(ARGV[2])
if f >= free then
  local delay = tonumber(ARGV[3]) * 2 ^ (f - free)
  local cap = tonumber(ARGV[4])
  if delay > cap then delay = cap end
  redis.call('HSET', KEYS[1], 'l', now + delay)
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return f
`);

/** Gives one reservation back without recording anything. */
const RELEASE = defineRedisScript(`${LUA_NOW}${LOAD_STATE}
if p > 0 then redis.call('HSET', KEYS[1], 'p', p - 1) end
return p
`);

export function createRedisBackoff(client: RedisClient, prefix: string, s: BackoffSettings): LoginBackoff {
  // Always hashed: account identifiers are e-mail addresses, which need not sit in Redis in clear.
  const keyOf = (account: string) => `${prefix}lb:${createHash('sha256').update(account).digest('base64url')}`;
  const nowArg = () => (s.now ? String(Math.floor(s.now())) : '');

  return {
    async reserve(account: string): Promise<BackoffDecision> {
      const args = [nowArg(), String(s.freeFailures), String(s.reservationTtlMs), String(s.forgetAfterMs)];
      const [allowed, retryMs, failures] = ((await RESERVE.run(client, [keyOf(account)], args)) as number[]).map(Number);
      return { allowed: allowed === 1, retryAfterSec: allowed === 1 ? 0 : Math.ceil(retryMs / 1000), failures };
    },
    async recordFailure(account: string): Promise<void> {
      const args = [nowArg(), String(s.freeFailures), String(s.baseDelayMs), String(s.maxDelayMs), String(s.forgetAfterMs)];
      await FAILURE.run(client, [keyOf(account)], args);
    },
    async recordSuccess(account: string): Promise<void> {
      await client.del(keyOf(account));
    },
    async release(account: string): Promise<void> {
      await RELEASE.run(client, [keyOf(account)], [nowArg()]);
    },
  };
}
