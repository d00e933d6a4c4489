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
 * than MAX_LEASE; with fewer than 32 hits left, none at all (every hit is its own round trip, as
 * exact as without leases). A hit leased and not spent is not given back: it expires with the window, so
 * another instance can be refused early by at most the hits others hold, never admitted late.
 */

/**
 * KEYS[1] = window hash { c = count, r = reset ms, p = points it was opened with }. ARGV[1] = now ms or '' (server time),
 * ARGV[2] = window ms, ARGV[3] = points, ARGV[4] = hits wanted now (0: a refill, which never opens
 * a window), ARGV[5] = most hits to lease beyond them. Grants what is left, up to the hits wanted,
 * plus a lease of at most 1/16 of what is left after them, and none when that is under 32; hits
 * refused leave the count at points + 1 (a window's count never grows without bound). Returns { count before, granted, reset ms, now ms }. One script: every instance
 * sees one serial order; the reset time is stored once, when the window opens.
 */
const LEASE = defineRedisScript(`${LUA_NOW}
local LEASE_FROM = 32
local points = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local reset = tonumber(redis.call('HGET', KEYS[1], 'r'))
local fresh = (not reset) or reset <= now
if fresh and want == 0 then return { 0, 0, 0, now } end
local count = 0
if fresh then
  reset = now + tonumber(ARGV[2])
  redis.call('DEL', KEYS[1])
else
  count = tonumber(redis.call('HGET', KEYS[1], 'c')) or 0
end
local granted = 0
if count < points then
  local left = points - count - want
  local spare = 0
  if left >= LEASE_FROM then spare = math.min(tonumber(ARGV[5]), math.floor(left / 16)) end
  granted = math.min(points - count, want + spare)
end
local after = count + granted
if granted < want and after <= points then after = points + 1 end
if fresh then
  redis.call('HSET', KEYS[1], 'c', after, 'r', reset, 'p', points)
  redis.call('PEXPIREAT', KEYS[1], reset)
elseif after ~= count then
  redis.call('HSET', KEYS[1], 'c', after)
end
return { count, granted, reset, now }
`);

/**
 * KEYS[1] = window hash; ARGV[1] = the window's end in Unix seconds, rounded up (the `resetAt` of the
 * result that counted the hit), or '' for whatever window is current. Takes one hit back within the
 * window that counted it, never below zero: a count at the refusal mark (points + 1) goes back from
 * points, so what is given back is an admitted hit, not a refused one. Returns the count after, or -1
 * when nothing was taken back. One script: parallel refunds and hits see one serial order.
 */
const REFUND = defineRedisScript(`
local c = tonumber(redis.call('HGET', KEYS[1], 'c'))
if not c then return -1 end
local at = tonumber(ARGV[1])
if at then
  local r = tonumber(redis.call('HGET', KEYS[1], 'r'))
  if (not r) or math.ceil(r / 1000) ~= at then return -1 end
end
local p = tonumber(redis.call('HGET', KEYS[1], 'p'))
if p and c > p then c = p end
if c <= 0 then return -1 end
redis.call('HSET', KEYS[1], 'c', c - 1)
return c - 1
`);

/**
 * Most hits one instance leases on one key beyond those it needs at once. The half left when the
 * refill is asked for must outlast the refill's round trip on a busy event loop (50 connections at
 * ~30 µs a request is a turn of 1.5 ms, and the reply is read a turn or two after it arrives), or
 * callers queue behind every refill and take the promise path. At 64, a key at 12,000 requests a second ran dry
 * before the refill came back; at 256, one at 32,000 a second (one session validated flat out) still
 * did for 5-7 % of its requests, which then cost the CPU and the old-generation garbage of a wait;
 * at 1,024 fewer than 0.05 % wait (bench/results/limits-old-space-*.txt).
 */
export const MAX_LEASE = 1024;

/** Leases of at least this many hits are refilled before they run out (smaller ones when spent). */
const REFILL_FROM = 4;

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
  /** Tokens right after the last grant: a refill is asked for when half of them are spent. */
  size: number;
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
  function spend(id: string, rule: LimitRule, first = false): LimitResult | null {
    const l = leases.get(id, Date.now());
    if (!l || l.tokens === 0 || l.points !== rule.points || l.windowMs !== windowMsOf(rule)) return null;
    const call = calls.get(id);
    // First come, first served: callers already waiting on Redis go before.
    if (!first && call && call.later.length > 0) return null;
    l.tokens -= 1;
    l.used += 1;
    // Half spent: the next block is asked for now, so that callers seldom wait for it.
    if (!call && l.size >= REFILL_FROM && l.tokens * 2 <= l.size) send(id, rule, []);
    return toResult(l.count - l.tokens, l.resetMs, l.resetMs, rule);
  }

  /**
   * Records a grant: the window's count after it, and what of it this instance holds unspent.
   * Returns the tokens it held before (from a refill that crossed this call).
   */
  function hold(id: string, rule: LimitRule, sentAtMs: number, reply: number[], served: number): number {
    const [before, granted, resetMs, nowMs] = reply;
    const windowMs = windowMsOf(rule);
    const t = Date.now();
    const held = leases.get(id, t);
    const same = held && held.resetMs === resetMs && held.points === rule.points && held.windowMs === windowMs ? held : undefined;
    // What the instance still holds of the window was counted in `before`, so count − tokens stays its hits.
    const tokens = (same?.tokens ?? 0) + granted - served;
    const lease: Lease = {
      points: rule.points,
      windowMs,
      resetMs,
      // Measured from when the call was sent, so never past the window's end in Redis.
      expiresAtMs: sentAtMs + (resetMs - nowMs),
      count: before + granted,
      tokens,
      size: tokens,
      used: (same?.used ?? 0) + served,
    };
    const kept = same?.tokens ?? 0;
    if (same) Object.assign(same, lease);
    else leases.set(id, lease, t);
    return kept;
  }

  /** The call out for `id`, unless it is lost. */
  function callOut(id: string): Call | undefined {
    const call = calls.get(id);
    return call && Date.now() - call.sentAtMs < STALE_CALL_MS ? call : undefined;
  }

  /**
   * Asks Redis for the hits of `batch` (all with `rule`; none for a refill), plus a lease that keeps
   * what the instance holds within maxLease; `later` waits behind it.
   */
  function send(id: string, rule: LimitRule, batch: Waiter[], later: Waiter[] = []): void {
    const sentAtMs = Date.now();
    const call: Call = { sentAtMs, later };
    calls.set(id, call);
    const sentEpoch = epoch;
    const windowMs = windowMsOf(rule);
    const held = leases.get(id, sentAtMs);
    const same = held && held.points === rule.points && held.windowMs === windowMs ? held : undefined;
    const spare = Math.max(0, Math.min(maxLease - (same?.tokens ?? 0), same?.used ?? 0));
    if (stats) stats.calls += 1;
    LEASE.run(client, [id], ['', String(windowMs), String(rule.points), String(batch.length), String(spare)]).then(
      (raw) => {
        if (calls.get(id) === call) calls.delete(id);
        const reply = (raw as unknown[]).map(Number);
        const [before, granted, resetMs, nowMs] = reply;
        const served = Math.min(granted, batch.length);
        // A reset or an outage since: the hits are the callers', no lease of a cleared window is kept.
        const kept = sentEpoch === epoch && resetMs > 0 ? hold(id, rule, sentAtMs, reply, served) : 0;
        // Redis counted what the instance held as hits: its own hits are `before - kept`.
        batch.forEach((w, i) =>
          w.resolve(
            i < served ? toResult(before - kept + i + 1, resetMs, nowMs, rule) : (spend(id, rule, true) ?? toResult(rule.points + 1, resetMs, nowMs, rule)),
          ),
        );
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
    // A refill went out on the way: the rest wait for it (one call per key in flight).
    const out = callOut(id);
    if (out) return void out.later.push(...rest);
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
          const call = callOut(id);
          // Callers on a key whose lease call is out wait for it (no stampede), unless it is lost.
          if (call) call.later.push(waiter);
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
    async refund(bucket: string, key: string, windowResetAt?: number): Promise<void> {
      const id = counterKey(prefix, bucket, key);
      const after = Number(await REFUND.run(client, [id], [windowResetAt === undefined ? '' : String(windowResetAt)]));
      // Replies come in the order the calls were sent, so the lease read here is the one the refund follows.
      const l = leases.get(id, Date.now());
      // The same step in the instance's figures (what it holds unspent stays counted).
      if (after >= 0 && l && l.count > l.tokens) l.count = Math.max(l.tokens, Math.min(l.count, l.points) - 1);
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
