import { createHash } from 'node:crypto';
import type { RedisClient } from './limit-types.js';

export interface RedisScript {
  run(client: RedisClient, keys: string[], args: string[]): Promise<unknown>;
}

/**
 * A Lua script run by EVALSHA (one round trip). The SHA is computed locally, so nothing is loaded
 * up front; after a Redis restart or SCRIPT FLUSH the first NOSCRIPT falls back to EVAL, which
 * also caches the script again on the server.
 */
export function defineRedisScript(source: string): RedisScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return {
    async run(client, keys, args) {
      try {
        return await client.evalSha(sha, { keys, arguments: args });
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        return client.eval(source, { keys, arguments: args });
      }
    },
  };
}

/** Lua prelude: `now` in ms, from the caller when given (tests), else from the Redis server so every instance agrees. */
export const LUA_NOW = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;
