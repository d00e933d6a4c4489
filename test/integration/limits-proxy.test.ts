import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { startTestApp, TEST_ENV, type TestApp } from '../helpers/test-app.js';

/*
 * Which bucket a request landed in is read from X-RateLimit-Remaining: each app has a budget of
 * 1000 per window, so a fresh bucket answers 999 and a reused one less.
 */
const remaining = async (t: TestApp, xff?: string): Promise<number> => {
  // A path without a route is in the default class (the probes are not limited).
  const r = await t.request('GET', '/nope', xff === undefined ? {} : { headers: { 'X-Forwarded-For': xff } });
  expect(r.status).toBe(404);
  return Number(r.headers.get('x-ratelimit-remaining'));
};

const FRESH = 999;

async function withApp(trustProxy: string, fn: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await startTestApp({ env: { TRUST_PROXY: trustProxy, RATE_LIMIT_DEFAULT: '1000/1h' } });
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

describe('client address behind proxies', () => {
  it('when TRUST_PROXY=false, then X-Forwarded-For is ignored and the socket address is the key', async () => {
    await withApp('false', async (t) => {
      expect(await remaining(t, '198.51.100.1')).toBe(FRESH);
      expect(await remaining(t, '198.51.100.2')).toBe(FRESH - 1);
      expect(await remaining(t)).toBe(FRESH - 2);
    });
  });

  it('when TRUST_PROXY=1, then the last hop of X-Forwarded-For is the key, and earlier (client-written) hops are not', async () => {
    await withApp('1', async (t) => {
      expect(await remaining(t, '198.51.100.1')).toBe(FRESH);
      expect(await remaining(t, '198.51.100.2')).toBe(FRESH);
      // A client prepending addresses of its own choosing does not get a fresh bucket.
      expect(await remaining(t, '203.0.113.50, 198.51.100.1')).toBe(FRESH - 1);
      expect(await remaining(t, '203.0.113.51, 198.51.100.1')).toBe(FRESH - 2);
    });
  });

  it('when TRUST_PROXY=1 and no header is sent, then the socket address is the key, never one shared empty bucket', async () => {
    await withApp('1', async (t) => {
      expect(await remaining(t)).toBe(FRESH);
      expect(await remaining(t, '')).toBe(FRESH - 1);
      // Someone else, with a proper header, is not in the header-less bucket.
      expect(await remaining(t, '198.51.100.9')).toBe(FRESH);
      expect(await remaining(t)).toBe(FRESH - 2);
    });
  });

  it('when TRUST_PROXY lists the proxy (CIDR), then its X-Forwarded-For is honoured; when it does not, then ignored', async () => {
    await withApp('127.0.0.0/8', async (t) => {
      expect(await remaining(t, '198.51.100.1')).toBe(FRESH);
      expect(await remaining(t, '198.51.100.2')).toBe(FRESH);
    });
    await withApp('10.0.0.0/8,192.168.1.1', async (t) => {
      expect(await remaining(t, '198.51.100.1')).toBe(FRESH);
      expect(await remaining(t, '198.51.100.2')).toBe(FRESH - 1);
    });
  });

  it('when a trusted CIDR list meets a chain, then untrusted hops stop the walk at the first address not in the list', async () => {
    await withApp('127.0.0.1,10.0.0.0/8', async (t) => {
      // client, proxy A (10.x, trusted), socket 127.0.0.1 (trusted): the client address is the key.
      expect(await remaining(t, '198.51.100.7, 10.1.2.3')).toBe(FRESH);
      expect(await remaining(t, '198.51.100.7, 10.9.9.9')).toBe(FRESH - 1);
      // A forged "trusted" hop before an untrusted one changes nothing.
      expect(await remaining(t, '10.0.0.1, 198.51.100.8')).toBe(FRESH);
      expect(await remaining(t, '10.0.0.2, 198.51.100.8')).toBe(FRESH - 1);
    });
  });

  it('when IPv6 clients rotate addresses inside one /64, then they share one bucket; another /64 gets its own', async () => {
    await withApp('1', async (t) => {
      expect(await remaining(t, '2001:db8:1:2::1')).toBe(FRESH);
      expect(await remaining(t, '2001:db8:1:2:dead:beef:0:1')).toBe(FRESH - 1);
      expect(await remaining(t, '2001:DB8:1:2::ffff')).toBe(FRESH - 2);
      expect(await remaining(t, '2001:db8:1:3::1')).toBe(FRESH);
    });
  });

  it('when an IPv4-mapped IPv6 address arrives, then it shares the bucket of the plain IPv4 address', async () => {
    await withApp('1', async (t) => {
      expect(await remaining(t, '198.51.100.77')).toBe(FRESH);
      expect(await remaining(t, '::ffff:198.51.100.77')).toBe(FRESH - 1);
    });
  });

  it('when TRUST_PROXY names something that is not an address, then configuration fails before the server starts', async () => {
    const load = (v: string) => () => loadConfig({ env: { ...TEST_ENV, TRUST_PROXY: v }, skipFile: true });
    expect(load('10.0.0.0/8,not-a-cidr')).toThrow(/TRUST_PROXY/);
    expect(load('10.0.0.0/33')).toThrow(/TRUST_PROXY/);
    expect(load('10.0.0.0/8, loopback, ::1, 192.168.0.0/255.255.0.0')().trustProxy).toEqual(['10.0.0.0/8', 'loopback', '::1', '192.168.0.0/255.255.0.0']);
  });
});
