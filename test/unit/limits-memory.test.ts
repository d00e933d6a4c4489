import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../src/limits/memory-limiter.js';
import { createLoginBackoff } from '../../src/limits/login-backoff.js';

/** A clock the test moves by hand, starting mid-second so rounding to whole seconds is exercised. */
function manualClock(startMs = 1_800_000_000_250) {
  let t = startMs;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

const rule = { points: 5, durationSec: 60 };

describe('memory rate limiter', () => {
  it('when 50 calls consume one key in parallel, then exactly the limit is admitted', async () => {
    const limiter = createMemoryRateLimiter();
    const results = await Promise.all(Array.from({ length: 50 }, () => limiter.consume('login', '10.0.0.1', rule)));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
    expect(results.filter((r) => !r.allowed).every((r) => r.remaining === 0 && r.retryAfterSec > 0)).toBe(true);
  });

  it('when consumeNow and consume take turns on one key, then they count as one window, answered without waiting', async () => {
    const limiter = createMemoryRateLimiter();
    const seen = [];
    for (let i = 0; i < 3; i++) {
      seen.push(limiter.consumeNow!('login', 'k', rule));
      seen.push(await limiter.consume('login', 'k', rule));
    }
    expect(seen.map((r) => r!.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    expect(seen.map((r) => r!.allowed)).toEqual([true, true, true, true, true, false]);
    expect(() => limiter.consumeNow!('login', 'k', { points: 0, durationSec: 60 })).toThrow();
  });

  it('when a key consumes, then remaining counts down and resetAt stays at the end of the window', async () => {
    const clock = manualClock();
    const limiter = createMemoryRateLimiter({ now: clock.now });
    const seen = [];
    for (let i = 0; i < 6; i++) {
      seen.push(await limiter.consume('login', 'k', rule));
      clock.advance(1_000);
    }
    expect(seen.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    expect(seen.map((r) => r.allowed)).toEqual([true, true, true, true, true, false]);
    expect(new Set(seen.map((r) => r.resetAt))).toEqual(new Set([Math.ceil((1_800_000_000_250 + 60_000) / 1000)]));
    expect(seen.every((r) => r.limit === 5)).toBe(true);
    // Refused 5 s into the window (5 advances of 1 s), so 55 s remain.
    expect(seen[5].retryAfterSec).toBe(55);
    expect(seen.slice(0, 5).every((r) => r.retryAfterSec === 0)).toBe(true);
  });

  it('when the window passes, then the budget returns with a new resetAt', async () => {
    const clock = manualClock();
    const limiter = createMemoryRateLimiter({ now: clock.now });
    for (let i = 0; i < 6; i++) await limiter.consume('login', 'k', rule);
    const firstReset = (await limiter.consume('login', 'k', rule)).resetAt;
    clock.advance(59_999);
    expect((await limiter.consume('login', 'k', rule)).allowed).toBe(false);
    clock.advance(1);
    const fresh = await limiter.consume('login', 'k', rule);
    expect(fresh).toMatchObject({ allowed: true, remaining: 4, retryAfterSec: 0 });
    expect(fresh.resetAt).toBe(firstReset + 60);
  });

  it('when buckets or keys differ, then each has its own budget', async () => {
    const limiter = createMemoryRateLimiter();
    const one = { points: 1, durationSec: 60 };
    expect((await limiter.consume('login', 'a', one)).allowed).toBe(true);
    expect((await limiter.consume('login', 'a', one)).allowed).toBe(false);
    expect((await limiter.consume('registration', 'a', one)).allowed).toBe(true);
    expect((await limiter.consume('login', 'b', one)).allowed).toBe(true);
    const longA = 'x'.repeat(500) + 'a';
    const longB = 'x'.repeat(500) + 'b';
    expect((await limiter.consume('login', longA, one)).allowed).toBe(true);
    expect((await limiter.consume('login', longB, one)).allowed).toBe(true);
    expect((await limiter.consume('login', longA, one)).allowed).toBe(false);
  });

  it('when reset is called, then the key has its full budget again', async () => {
    const limiter = createMemoryRateLimiter();
    for (let i = 0; i < 5; i++) await limiter.consume('login', 'k', rule);
    await limiter.reset('login', 'k');
    expect(await limiter.consume('login', 'k', rule)).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('when maxKeys is reached, then expired windows go first and then the oldest live one', async () => {
    const clock = manualClock();
    const limiter = createMemoryRateLimiter({ now: clock.now, maxKeys: 2 });
    const one = { points: 1, durationSec: 60 };
    const short = { points: 1, durationSec: 1 };
    await limiter.consume('login', 'short-lived', short);
    await limiter.consume('login', 'live', one);
    clock.advance(2_000);
    await limiter.consume('login', 'newcomer', one);
    // 'short-lived' had expired, so 'live' kept its count.
    expect((await limiter.consume('login', 'live', one)).allowed).toBe(false);
    await limiter.consume('login', 'third', one);
    // Now both remaining windows were live: the oldest ('live') was evicted and starts afresh.
    expect((await limiter.consume('login', 'live', one)).allowed).toBe(true);
  });

  it('when a rule or bucket is malformed, then consume throws instead of admitting', async () => {
    const limiter = createMemoryRateLimiter();
    await expect(limiter.consume('login', 'k', { points: 0, durationSec: 60 })).rejects.toThrow(TypeError);
    await expect(limiter.consume('login', 'k', { points: 5, durationSec: Number.NaN })).rejects.toThrow(TypeError);
    await expect(limiter.consume('lo:gin', 'k', rule)).rejects.toThrow(TypeError);
  });
});

describe('memory login backoff', () => {
  const reserveMany = (b: ReturnType<typeof createLoginBackoff>, n: number) => Promise.all(Array.from({ length: n }, () => b.reserve('alice@example.com')));

  it('when 50 attempts reserve in parallel on a fresh account, then only the free failures are admitted', async () => {
    const backoff = createLoginBackoff('memory');
    const decisions = await reserveMany(backoff, 50);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
  });

  it('when 50 attempts reserve in parallel one failure short of the lock, then exactly one is admitted', async () => {
    const clock = manualClock();
    const backoff = createLoginBackoff('memory', { now: clock.now });
    for (let i = 0; i < 4; i++) {
      expect((await backoff.reserve('alice@example.com')).allowed).toBe(true);
      await backoff.recordFailure('alice@example.com');
    }
    const decisions = await reserveMany(backoff, 50);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(1);
    expect(decisions.every((d) => d.failures === 4)).toBe(true);
    await backoff.recordFailure('alice@example.com');
    const locked = await reserveMany(backoff, 50);
    expect(locked.filter((d) => d.allowed)).toHaveLength(0);
    expect(locked[0]).toMatchObject({ retryAfterSec: 30, failures: 5 });
  });

  it('when failures continue after each lock, then the lock doubles up to the cap', async () => {
    const clock = manualClock();
    const backoff = createLoginBackoff('memory', { now: clock.now, freeFailures: 2, baseDelaySec: 30, maxDelaySec: 200 });
    const account = 'bob@example.com';
    const fail = async () => {
      expect((await backoff.reserve(account)).allowed).toBe(true);
      await backoff.recordFailure(account);
    };
    await fail();
    await fail();
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      const refused = await backoff.reserve(account);
      expect(refused.allowed).toBe(false);
      delays.push(refused.retryAfterSec);
      clock.advance(refused.retryAfterSec * 1000 - 1);
      expect((await backoff.reserve(account)).allowed).toBe(false);
      clock.advance(1);
      await fail();
    }
    expect(delays).toEqual([30, 60, 120, 200, 200]);
  });

  it('when a login succeeds, then the failures are forgotten', async () => {
    const clock = manualClock();
    const backoff = createLoginBackoff('memory', { now: clock.now });
    for (let i = 0; i < 5; i++) {
      await backoff.reserve('carol@example.com');
      await backoff.recordFailure('carol@example.com');
    }
    clock.advance(30_000);
    expect(await backoff.reserve('carol@example.com')).toMatchObject({ allowed: true, failures: 5 });
    await backoff.recordSuccess('carol@example.com');
    const decisions = await Promise.all(Array.from({ length: 50 }, () => backoff.reserve('carol@example.com')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
    expect(decisions[0].failures).toBe(0);
  });

  it('when a reservation is never recorded, then its slot frees after the reservation lapses', async () => {
    const clock = manualClock();
    const backoff = createLoginBackoff('memory', { now: clock.now, freeFailures: 1 });
    expect((await backoff.reserve('dan@example.com')).allowed).toBe(true);
    expect(await backoff.reserve('dan@example.com')).toMatchObject({ allowed: false, retryAfterSec: 1 });
    clock.advance(15_000);
    expect((await backoff.reserve('dan@example.com')).allowed).toBe(true);
  });

  it('when options are inconsistent, then creating the backoff throws', () => {
    expect(() => createLoginBackoff('memory', { freeFailures: 0 })).toThrow(TypeError);
    expect(() => createLoginBackoff('memory', { baseDelaySec: 60, maxDelaySec: 30 })).toThrow(TypeError);
  });
});
