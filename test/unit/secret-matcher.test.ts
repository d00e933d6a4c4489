import { describe, expect, it } from 'vitest';
import { safeEqual, secretMatcher } from '../../src/services/security/tokens.js';

const SECRET = 'bench-bridge-secret-0123456789abcdef';

describe('secretMatcher (the bridge secret, the metrics token, the limits key)', () => {
  const matches = secretMatcher(SECRET);

  it('when the very secret is sent, then it matches (a copy built at run time too)', () => {
    expect(matches(SECRET)).toBe(true);
    expect(matches(['bench-bridge-secret-', '0123456789abcdef'].join(''))).toBe(true);
  });

  it('when anything else is sent (one character off at the start, the middle or the end, a prefix, a longer text, empty, another case), then it does not', () => {
    const off = (i: number) => SECRET.slice(0, i) + (SECRET[i] === 'x' ? 'y' : 'x') + SECRET.slice(i + 1);
    for (const given of [off(0), off(17), off(SECRET.length - 1), SECRET.slice(0, -1), `${SECRET}0`, '', SECRET.toUpperCase(), ` ${SECRET}`]) {
      expect(matches(given), JSON.stringify(given)).toBe(false);
    }
  });

  it('when the value is not a string (a repeated header is an array, a missing one undefined), then it does not match', () => {
    for (const given of [undefined, null, 0, [SECRET], { toString: () => SECRET }]) expect(matches(given)).toBe(false);
  });

  it('when secrets hold non-ASCII text, then only the same text matches (the digest covers UTF-8 bytes, not code units)', () => {
    const unicode = secretMatcher('clé-😀-ü');
    expect(unicode('clé-😀-ü')).toBe(true);
    expect(unicode('cle-😀-u')).toBe(false);
    expect(unicode('clé-😁-ü')).toBe(false);
    // Two strings whose code units agree below 256 but not above (a latin1 reading of them would be equal).
    expect(secretMatcher('\u0141')('\u0041')).toBe(false);
  });

  it('when safeEqual compares two values, then it is true only for two equal strings', () => {
    expect(safeEqual('a1b2', 'a1b2')).toBe(true);
    expect(safeEqual('a1b2', 'a1b3')).toBe(false);
    expect(safeEqual(undefined, 'a1b2')).toBe(false);
    expect(safeEqual('a1b2', null)).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });
});
