import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countText, limitHeaderPairs } from '../../src/http/middleware/rate-limit-request.js';
import type { LimitResult } from '../../src/limits/rate-limiter.js';

describe('countText (a count as header text, outside the number-to-string cache)', () => {
  it('when given any safe integer, then it writes the same digits as String', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        expect(countText(n)).toBe(String(n));
      }),
      { numRuns: 20_000 },
    );
    for (const n of [0, -0, 1, 9, 10, 999_999_999, 1_000_000_000, 2 ** 31, 2 ** 53 - 1, -1]) expect(countText(n)).toBe(String(n));
  });

  it('when given what toFixed would spell differently (a fraction, 1e21 and beyond, NaN, Infinity), then it is String', () => {
    for (const n of [0.5, 1.25, -2.5, 1e21, 1.5e22, Number.NaN, Number.POSITIVE_INFINITY]) expect(countText(n)).toBe(String(n));
  });
});

describe('limitHeaderPairs', () => {
  const result = (over: Partial<LimitResult>): LimitResult => ({ allowed: true, limit: 100, remaining: 42, resetAt: 1_795_940_405, retryAfterSec: 0, ...over });

  it('when the hit is allowed, then the three X-RateLimit headers come in their order and no Retry-After', () => {
    expect(limitHeaderPairs(result({}))).toEqual(['X-RateLimit-Limit', '100', 'X-RateLimit-Remaining', '42', 'X-RateLimit-Reset', '1795940405']);
  });

  it('when given a head block, then the headers are appended to it and it is returned', () => {
    const head = ['X-Request-ID', 'r1'];
    expect(limitHeaderPairs(result({}), head)).toBe(head);
    expect(head).toEqual(['X-Request-ID', 'r1', 'X-RateLimit-Limit', '100', 'X-RateLimit-Remaining', '42', 'X-RateLimit-Reset', '1795940405']);
  });

  it('when the hit is refused, then Retry-After follows, never below one second', () => {
    expect(limitHeaderPairs(result({ allowed: false, remaining: 0, retryAfterSec: 17 })).slice(-4)).toEqual([
      'X-RateLimit-Reset',
      '1795940405',
      'Retry-After',
      '17',
    ]);
    expect(limitHeaderPairs(result({ allowed: false, remaining: 0, retryAfterSec: 0 })).slice(-2)).toEqual(['Retry-After', '1']);
  });
});
