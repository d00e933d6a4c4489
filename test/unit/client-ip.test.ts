import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { clientIp, ipLimitKey, ipNetworkKey, normalizeIp, parseIpv6 } from '../../src/http/middleware/client-ip.js';

const fakeReq = (ip: string | undefined, remoteAddress?: string) => ({ ip, socket: { remoteAddress } }) as unknown as Request;

describe('normalizeIp', () => {
  it('when an IPv4-mapped IPv6 address comes in (dotted or hex), then the plain IPv4 address comes out', () => {
    expect(normalizeIp('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeIp('::FFFF:cb00:7107')).toBe('203.0.113.7');
    expect(normalizeIp('[::ffff:127.0.0.1]')).toBe('127.0.0.1');
  });

  it('when one IPv6 address is written in different ways, then every spelling normalises to the same text', () => {
    const spellings = ['2001:db8::1', '2001:DB8:0:0:0:0:0:1', '2001:0db8::0001', '2001:db8::1%eth0'];
    expect(new Set(spellings.map(normalizeIp)).size).toBe(1);
    expect(normalizeIp('fe80::1%eth0')).toBe('fe80:0:0:0:0:0:0:1');
  });

  it('when the value is not an IP address, then it is returned trimmed and unchanged', () => {
    expect(normalizeIp(' not-an-ip ')).toBe('not-an-ip');
    expect(normalizeIp('1.2.3.999')).toBe('1.2.3.999');
  });
});

describe('parseIpv6', () => {
  it('when an address has an embedded IPv4 tail, then it fills the last two groups', () => {
    expect(parseIpv6('64:ff9b::192.0.2.33')).toEqual([0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x0221]);
  });

  it('when the text is not IPv6, then null comes back', () => {
    expect(parseIpv6('1.2.3.4')).toBeNull();
    expect(parseIpv6('2001:db8::1::2')).toBeNull();
    expect(parseIpv6('')).toBeNull();
  });
});

describe('ipLimitKey', () => {
  it('when two IPv6 addresses share a /64, then they share one key; when they differ inside the /48, then not', () => {
    expect(ipLimitKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(ipLimitKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(ipLimitKey('2001:db8:1:3::1')).not.toBe(ipLimitKey('2001:db8:1:2::1'));
  });

  it('when an IPv4 address (or a mapped one) comes in, then the key is the whole address', () => {
    expect(ipLimitKey('198.51.100.4')).toBe('198.51.100.4');
    expect(ipLimitKey('::ffff:198.51.100.4')).toBe('198.51.100.4');
    expect(ipLimitKey('198.51.100.5')).not.toBe(ipLimitKey('198.51.100.4'));
  });

  it('when the value is not an address, then it gets a key of its own that cannot collide with an address', () => {
    expect(ipLimitKey('garbage')).toBe('raw:garbage');
  });
});

describe('ipNetworkKey', () => {
  it('when addresses share an IPv4 /24 or an IPv6 /48, then they share one network key', () => {
    expect(ipNetworkKey('198.51.100.4')).toBe('198.51.100.0/24');
    expect(ipNetworkKey('198.51.100.250')).toBe('198.51.100.0/24');
    expect(ipNetworkKey('198.51.101.4')).not.toBe(ipNetworkKey('198.51.100.4'));
    expect(ipNetworkKey('2001:db8:1:2::1')).toBe('2001:db8:1::/48');
    expect(ipNetworkKey('2001:db8:1:ffff::1')).toBe('2001:db8:1::/48');
  });
});

describe('clientIp', () => {
  it('when Express resolved an address, then it is used, normalised', () => {
    expect(clientIp(fakeReq('::ffff:10.0.0.9', '127.0.0.1'))).toBe('10.0.0.9');
  });

  it('when Express has no address, then the socket address is used, and never an empty string', () => {
    expect(clientIp(fakeReq(undefined, '192.0.2.1'))).toBe('192.0.2.1');
    expect(clientIp(fakeReq(undefined, undefined))).toBe('unknown');
    expect(clientIp(fakeReq('', ''))).toBe('unknown');
  });
});
