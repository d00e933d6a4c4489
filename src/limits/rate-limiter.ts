/** The rate limiter's types and its three backends. */
export type { LeasingRateLimiter, LimitResult, LimitRule, RateLimiter, RedisClient } from './limit-types.js';
export { createMemoryRateLimiter } from './memory-limiter.js';
export { createRedisRateLimiter } from './redis-limiter.js';
export { createFallbackRateLimiter } from './fallback-limiter.js';
