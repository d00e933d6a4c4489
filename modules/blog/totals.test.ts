import { describe, expect, it } from 'vitest';
import { cachedTotal, forgetTotals } from './totals.js';

describe('blog list totals', () => {
  it('when a total is small, then it is counted every time; when large, then it is kept for a few seconds per owner', async () => {
    const owner = {};
    let n = 0;
    const small = () => Promise.resolve(++n);
    expect(await cachedTotal(owner, 'a', small)).toBe(1);
    expect(await cachedTotal(owner, 'a', small)).toBe(2);
    let big = 50_000;
    const large = () => Promise.resolve(big++);
    expect(await cachedTotal(owner, 'b', large)).toBe(50_000);
    expect(await cachedTotal(owner, 'b', large)).toBe(50_000);
    expect(await cachedTotal({}, 'b', large)).toBe(50_001);
    forgetTotals(owner);
    expect(await cachedTotal(owner, 'b', large)).toBe(50_002);
  });
});
