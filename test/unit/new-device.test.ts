import { describe, expect, it } from 'vitest';
import { deviceFamily, networkOf, whatIsNew } from '../../src/audit/new-device.js';
import { eventId, eventIdFloor, eventIdTime } from '../../src/audit/event-id.js';

const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const CHROME_WIN = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

describe('the new-device check', () => {
  it('when only the browser version differs, then the family is the same; another OS or browser is another family', () => {
    expect(deviceFamily(CHROME_MAC)).toBe(deviceFamily(CHROME_MAC.replace('131.0.0.0', '133.0.1.2')));
    expect(deviceFamily(CHROME_MAC)).not.toBe(deviceFamily(CHROME_WIN));
    expect(deviceFamily(CHROME_MAC)).not.toBe(deviceFamily(SAFARI_IPHONE));
    expect(deviceFamily('MyApp/2.1 (build 7)')).toBe(deviceFamily('MyApp/3.0'));
    expect(deviceFamily('MyApp/2.1')).not.toBe(deviceFamily('OtherApp/2.1'));
    expect(deviceFamily(null)).toBe('none');
  });

  it('when addresses share an IPv4 /24 or an IPv6 /48, then they are one network', () => {
    expect(networkOf('198.51.100.7')).toBe(networkOf('198.51.100.250'));
    expect(networkOf('198.51.100.7')).not.toBe(networkOf('198.51.101.7'));
    expect(networkOf('2001:db8:aa:1::5')).toBe(networkOf('2001:db8:aa:ffff::9'));
    expect(networkOf('2001:db8:aa::1')).not.toBe(networkOf('2001:db8:ab::1'));
    expect(networkOf('::ffff:198.51.100.7')).toBe(networkOf('198.51.100.8'));
  });

  it('when a sign-in matches an earlier browser and network, then nothing is new; otherwise it says which', () => {
    const earlier = [{ ip: '198.51.100.7', user_agent: CHROME_MAC }];
    expect(whatIsNew({ ip: '198.51.100.9', user_agent: CHROME_MAC }, earlier)).toEqual([]);
    expect(whatIsNew({ ip: '198.51.100.9', user_agent: CHROME_WIN }, earlier)).toEqual(['device']);
    expect(whatIsNew({ ip: '203.0.113.1', user_agent: CHROME_MAC }, earlier)).toEqual(['network']);
    expect(whatIsNew({ ip: null, user_agent: CHROME_MAC }, earlier)).toEqual([]);
    expect(whatIsNew({ ip: '203.0.113.1', user_agent: SAFARI_IPHONE }, [])).toEqual(['device', 'network']);
  });

  it('when a floor id is made for a time, then every id made at or after it sorts above it and every earlier one below', () => {
    const now = Date.now();
    const floor = eventIdFloor(now);
    expect(eventIdTime(floor)).toBe(now);
    const later = eventId(now + 5);
    expect(later > floor).toBe(true);
    expect(eventIdFloor(now - 1) < floor).toBe(true);
  });
});
