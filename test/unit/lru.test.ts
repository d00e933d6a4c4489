import { describe, expect, it } from 'vitest';
import { Lru } from '../../src/cache/lru.js';

const TTL = 60_000;

describe('Lru', () => {
  it('when it holds more than its capacity, then the least recently used entry goes first', () => {
    const lru = new Lru<number>(2);
    lru.set('a', 1, TTL);
    lru.set('b', 2, TTL);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3, TTL);
    expect(lru.keys().sort()).toEqual(['a', 'c']);
    expect(lru.get('b')).toBeUndefined();
  });

  it('when an entry is read at least once every half capacity of additions, then it is never evicted', () => {
    const lru = new Lru<string>(10);
    lru.set('hot', 'kept', TTL);
    for (let i = 0; i < 1_000; i++) {
      lru.set(`k${i}`, 'x', TTL);
      if (i % 5 === 4) expect(lru.get('hot')).toBe('kept');
    }
    expect(lru.size).toBe(10);
    expect(lru.get('hot')).toBe('kept');
    expect(lru.get('k0')).toBeUndefined();
  });

  it('when an entry is not read while a whole capacity of others is added, then it is evicted', () => {
    const lru = new Lru<string>(4);
    lru.set('cold', 'gone', TTL);
    for (const k of ['b', 'c', 'd', 'e']) lru.set(k, k, TTL);
    expect(lru.get('cold')).toBeUndefined();
    expect(lru.keys()).toEqual(['b', 'c', 'd', 'e']);
  });

  it('when a recently added entry is read many times, then it stays where it is until half the capacity has passed it', () => {
    const lru = new Lru<number>(10);
    for (const k of ['a', 'b', 'c']) lru.set(k, 0, TTL);
    for (let i = 0; i < 100; i++) lru.get('a');
    // Two entries are newer than a: it is far from eviction, so reading it moves nothing.
    expect(lru.keys()).toEqual(['a', 'b', 'c']);
    for (const k of ['d', 'e', 'f']) lru.set(k, 0, TTL);
    lru.get('a');
    expect(lru.keys()).toEqual(['b', 'c', 'd', 'e', 'f', 'a']);
  });

  it('when an entry has expired, then it is not returned and is dropped', () => {
    let now = 1_000;
    const lru = new Lru<string>(10, () => now);
    lru.set('k', 'v', 500);
    now += 499;
    expect(lru.get('k')).toBe('v');
    now += 1;
    expect(lru.get('k')).toBeUndefined();
    expect(lru.size).toBe(0);
  });

  it('when an entry is read close to its expiry, then it asks for a renewal, and not before', () => {
    let now = 0;
    const lru = new Lru<string>(10, () => now);
    const renewed: string[] = [];
    const aging = { within: 100, renew: (key: string) => renewed.push(key) };
    lru.set('k', 'v', 1_000);
    now = 850;
    lru.get('k', aging);
    expect(renewed).toEqual([]);
    now = 950;
    lru.get('k', aging);
    expect(renewed).toEqual(['k']);
  });

  it('when an expired entry lingers and a hold covers its end, then it is served until the hold ends, and dropped once past its linger', () => {
    let now = 0;
    const lru = new Lru<string>(10, () => now, 500);
    lru.set('k', 'v', 1_000);
    now = 1_200;
    expect(lru.get('k')).toBeUndefined(); // ended, not served without a hold
    expect(lru.get('k', undefined, { from: 900, until: 1_300 })).toBe('v'); // ended after `from`: held
    expect(lru.get('k', undefined, { from: 1_000, until: 1_300 })).toBeUndefined(); // ended at `from`: not
    now = 1_300;
    expect(lru.get('k', undefined, { from: 900, until: 1_300 })).toBeUndefined(); // the hold is over
    expect(lru.size).toBe(1); // still lingering
    now = 1_500;
    const renewed: string[] = [];
    expect(lru.get('k', { within: 100, renew: (key) => renewed.push(key) }, { from: 900, until: 5_000 })).toBe('v');
    expect(renewed).toEqual(['k']); // a held entry has no time left: it asks for a renewal
    expect(lru.get('k')).toBeUndefined(); // 500 ms past its end: dropped
    expect(lru.size).toBe(0);
  });
});
