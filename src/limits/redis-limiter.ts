import { defineRedisScript, LUA_NOW } from './redis-script.js';
import { ExpiringMap } from './expiring-map.js';
import { assertRule, counterKey, toResult } from './limit-keys.js';
import type { LeasingRateLimiter, LimitResult, LimitRule, RedisClient } from './limit-types.js';

/*
 * Shared fixed windows on Redis, counted with leases (docs/rate-limits.md, "Leases").
 *
 * The window's count in Redis is the truth: every hit any instance admits was added to it before it
 * was admitted. An instance that keeps admitting hits on a key takes them from Redis in blocks
 * (a lease) and spends the block in process, so a busy key costs a round trip per block instead
 * of per request. A lease is small where it matters: never more than 1/16 of what the window has
 * left, never more than the instance itself admitted on the key in the window so far, never more
 * than MAX_LEASE; below 32 hits of headroom, none at all (every hit is its own round trip, as exact
 * as without leases). A hit leased and not spent is not given back: it expires with the window, so
 * another instance can be refused early by at most the hits others hold, never admitted late.
 */

/**
 * KEYS[1] = window hash { c = count, r = reset ms }. ARGV[1] = now ms or '' (server time),
 * ARGV[2] = window ms, ARGV[3] = points, ARGV[4] = hits wanted now (≥ 1), ARGV[5] = most hits to
 * lease beyond them. Grants what is left, up to the hits wanted plus a lease of at most 1/16 of
 * the headroom after them; hits refused leave the count at points + 1 (a window's count never grows
 * without bound). Returns { count before, granted, reset ms, now ms }. One script: every instance
 * sees one serial order; the reset time is stored once, when the window opens.
 */
const LEASE = defineRedisScript(`${LUA_NOW}
local points = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local reset = tonumber(redis.call('HGET', KEYS[1], 'r'))
local fresh = (not reset) or reset <= now
local count = 0
if fresh then
  reset = now + tonumber(ARGV[2])
  redis.call('DEL', KEYS[1])
else
  count = tonumber(redis.call('HGET', KEYS[1], 'c')) or 0
end
local granted = 0
if count < points then
  local spare = math.min(tonumber(ARGV[5]), math.floor((points - count - want) / 16))
  if spare < 0 then spare = 0 end
  granted = math.min(points - count, want + spare)
end
local after = count + granted
if granted < want and after <= points then after = points + 1 end
if fresh then
  redis.call('HSET', KEYS[1], 'c', after, 'r', reset)
  redis.call('PEXPIREAT', KEYS[1], reset)
elseif after ~= count then
  redis.call('HSET', KEYS[1], 'c', after)
end
return { count, granted, reset, now }
`);

/** KEYS[1] = window hash. Takes one hit back, never below zero, within the window that counted it; 1 when it did. */
const REFUND = defineRedisScript(`
local c = tonumber(redis.call('HGET', KEYS[1], 'c'))
if c and c > 0 then redis.call('HINCRBY', KEYS[1], 'c', -1) return 1 end
return 0
`);

/** Most hits one instance leases on one key beyond those it needs at once. */
export const MAX_LEASE = 64;

/** A lease call older than this is given up on (its answer still serves its own callers). */
const STALE_CALL_MS = 10_000;

const DEFAULT_MAX_KEYS = 100_000;

/** What this instance holds of one key's current window. */
interface Lease {
  points: number;
  windowMs: number;
  /** End of the window on the Redis clock. */
  resetMs: number;
  /** On this process's clock, no later than the window's end in Redis: not spent from then on. */
  expiresAtMs: number;
  /** The window's count in Redis after this instance's last grant. */
  count: number;
  /** Hits granted to this instance and not spent yet. */
  tokens: number;
  /** Hits this instance admitted in the window: a lease is never larger (a key seen once leases nothing). */
  used: number;
}

interface Waiter {
  rule: LimitRule;
  resolve(r: LimitResult): void;
  reject(err: unknown): void;
}

/** One lease call in flight for a key, and the callers that came while it was. */
interface Call {
  sentAtMs: number;
  later: Waiter[];
}

export interface RedisRateLimiterOptions {
  /** Most hits leased beyond those needed at once; 0 = no leases: one round trip per hit. */
  maxLease?: number;
  /** Most keys with a lease held at once; the oldest are dropped beyond it (their hits simply expire). */
  maxKeys?: number;
  /** Counts the round trips to Redis (tests and benchmarks read it). */
  stats?: { calls: number };
}

const windowMsOf = (rule: LimitRule) => Math.round(rule.durationSec * 1000);

/** Shared fixed windows on Redis: every instance using the same prefix draws on one budget per key. */
export function createRedisRateLimiter(client: RedisClient, prefix: string, opts: RedisRateLimiterOptions = {}): LeasingRateLimiter {
  const maxLease = opts.maxLease ?? MAX_LEASE;
  const stats = opts.stats;
  const leases = new ExpiringMap<Lease>(opts.maxKeys ?? DEFAULT_MAX_KEYS);
  const calls = new Map<string, Call>();
  // Bumped by reset() and forget(): a lease call sent before must not leave hits of a cleared window behind.
  let epoch = 0;

  /** A hit from the lease held on `id`, or null (nothing held, or callers already waiting for Redis). */
  function spend(id: string, rule: LimitRule): LimitResult | null {
    const l = leases.get(id, Date.now());
    if (!l || l.tokens === 0 || l.points !== rule.points || l.windowMs !== windowMsOf(rule) || calls.has(id)) return null;
    l.tokens -= 1;
    l.used += 1;
    return toResult(l.count - l.tokens, l.resetMs, l.resetMs, rule);
  }

  /** Asks Redis for the hits of `batch` (all with `rule`), plus a lease; `later` waits behind it. */
  function send(id: string, rule: LimitRule, batch: Waiter[], later: Waiter[] = []): void {
    const sentAtMs = Date.now();
    const call: Call = { sentAtMs, later };
    calls.set(id, call);
    const sentEpoch = epoch;
    const windowMs = windowMsOf(rule);
    const held = leases.get(id, sentAtMs);
    const sameWindow = held && held.points === rule.points && held.windowMs === windowMs ? held : undefined;
    const spare = Math.min(maxLease, sameWindow?.used ?? 0);
    if (stats) stats.calls += 1;
    LEASE.run(client, [id], ['', String(windowMs), String(rule.points), String(batch.length), String(spare)]).then(
      (reply) => {
        if (calls.get(id) === call) calls.delete(id);
        const [before, granted, resetMs, nowMs] = (reply as unknown[]).map(Number);
        const served = Math.min(granted, batch.length);
        const current = leases.get(id, Date.now());
        // Hits spent before, in this same window, still size the next lease.
        const used = current && current.resetMs === resetMs && current.points === rule.points ? current.used : 0;
        if (sentEpoch === epoch) {
          leases.set(
            id,
            {
              points: rule.points,
              windowMs,
              resetMs,
              // Measured from when the call was sent, so never past the window's end in Redis.
              expiresAtMs: sentAtMs + (resetMs - nowMs),
              count: before + granted,
              tokens: granted - served,
              used: used + served,
            },
            Date.now(),
          );
        }
        batch.forEach((w, i) => w.resolve(toResult(i < served ? before + i + 1 : rule.points + 1, resetMs, nowMs, rule)));
        drain(id, call.later);
      },
      (err: unknown) => {
        if (calls.get(id) === call) calls.delete(id);
        for (const w of [...batch, ...call.later]) w.reject(err);
      },
    );
  }

  /** The callers that waited behind a call: from the new lease while it lasts, the rest in one call. */
  function drain(id: string, waiting: Waiter[]): void {
    const rest: Waiter[] = [];
    for (const w of waiting) {
      const r = rest.length === 0 ? spend(id, w.rule) : null;
      if (r) w.resolve(r);
      else rest.push(w);
    }
    if (rest.length === 0) return;
    const rule = rest[0].rule;
    const same = (w: Waiter) => w.rule.points === rule.points && w.rule.durationSec === rule.durationSec;
    send(
      id,
      rule,
      rest.filter(same),
      rest.filter((w) => !same(w)),
    );
  }

  return {
    spendLeased(bucket, key, rule) {
      assertRule(rule);
      return spend(counterKey(prefix, bucket, key), rule);
    },
    consume(bucket: string, key: string, rule: LimitRule): Promise<LimitResult> {
      try {
        assertRule(rule);
        const id = counterKey(prefix, bucket, key);
        const spent = spend(id, rule);
        if (spent) return Promise.resolve(spent);
        return new Promise((resolve, reject) => {
          const waiter: Waiter = { rule, resolve, reject };
          const call = calls.get(id);
          // Callers on a key whose lease call is out wait for it (no stampede), unless it is lost.
          if (call && Date.now() - call.sentAtMs < STALE_CALL_MS) call.later.push(waiter);
          else send(id, rule, [waiter]);
        });
      } catch (err) {
        return Promise.reject(err);
      }
    },
    async reset(bucket: string, key: string): Promise<void> {
      const id = counterKey(prefix, bucket, key);
      epoch += 1;
      leases.delete(id);
      await client.del(id);
    },
    async refund(bucket: string, key: string): Promise<void> {
      const id = counterKey(prefix, bucket, key);
      const took = await REFUND.run(client, [id], []);
      // Replies come in the order the calls were sent, so the lease read here is the one the refund follows.
      const l = leases.get(id, Date.now());
      if (Number(took) === 1 && l && l.count > 0) l.count -= 1;
    },
    forget() {
      epoch += 1;
      leases.clear();
    },
    // The client belongs to the app, which closes it.
    async close(): Promise<void> {
      leases.clear();
    },
  };
}
