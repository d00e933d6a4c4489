import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import type { Request } from 'express';

/**
 * The caller's address as Express resolved it under `trust proxy` (config TRUST_PROXY), normalised:
 * IPv4-mapped IPv6 becomes plain IPv4, IPv6 is lower-cased and fully expanded, zones are dropped.
 * Without a trusted forwarding header Express answers the socket address, so a request without
 * X-Forwarded-For is never lumped together with others.
 */
export function clientIp(req: Request): string {
  const raw = req.ip || req.socket?.remoteAddress || '';
  return normalizeIp(raw) || 'unknown';
}

/**
 * clientIp for a request that Express never handles (the fast lane's own answers): the address `app`
 * (the Express app behind the lane) would resolve under its `trust proxy` setting, read through a view
 * of the request, which is left as it is. Without an Express app, the peer's address.
 */
export function clientIpOutside(app: unknown): (req: IncomingMessage) => string {
  const proto = (app as { request?: object } | null)?.request;
  if (!proto) return (req) => normalizeIp(req.socket?.remoteAddress ?? '') || 'unknown';
  return (req) => clientIp(Object.create(proto, { socket: { value: req.socket }, headers: { value: req.headers } }) as Request);
}

/** Canonical text of an address; anything that is not an IP address comes back trimmed, as given. */
export function normalizeIp(raw: string): string {
  let s = raw.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  if (isIPv4(s)) return s;
  const v6 = parseIpv6(s);
  if (!v6) return s;
  const v4 = mappedIpv4(v6);
  if (v4) return v4;
  return v6.map((h) => h.toString(16)).join(':');
}

/**
 * The key a client is counted under: an IPv4 address, or the /64 of an IPv6 address, because one
 * subscriber usually holds a whole /64 and could otherwise rotate through 2^64 addresses.
 * A value that is not an IP (a hop-count proxy setup passing garbage) is kept apart with a prefix.
 */
export function ipLimitKey(ip: string): string {
  const n = normalizeIp(ip);
  if (isIPv4(n)) return n;
  const v6 = parseIpv6(n);
  if (v6)
    return `${v6
      .slice(0, 4)
      .map((h) => h.toString(16))
      .join(':')}::/64`;
  return `raw:${n}`;
}

/**
 * A wider network than ipLimitKey (IPv4 /24, IPv6 /48): one source's share of an account's login
 * budget, so a handful of neighbouring addresses counts as one source.
 */
export function ipNetworkKey(ip: string): string {
  const n = normalizeIp(ip);
  if (isIPv4(n)) return `${n.split('.').slice(0, 3).join('.')}.0/24`;
  const v6 = parseIpv6(n);
  if (v6)
    return `${v6
      .slice(0, 3)
      .map((h) => h.toString(16))
      .join(':')}::/48`;
  return `raw:${n}`;
}

/** Eight 16-bit groups of an IPv6 address (zone dropped), or null when it is not one. */
export function parseIpv6(input: string): number[] | null {
  const s = input.split('%')[0];
  if (!isIPv6(s)) return null;
  let text = s.toLowerCase();
  const tail: number[] = [];
  // A dotted IPv4 tail stands for the last two groups.
  const dot = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dot) {
    const b = dot[1].split('.').map(Number);
    tail.push((b[0] << 8) | b[1], (b[2] << 8) | b[3]);
    text = text.slice(0, -dot[1].length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const width = 8 - tail.length;
  let head: number[];
  const gap = text.indexOf('::');
  if (gap >= 0) {
    const left = groups(text.slice(0, gap));
    const right = groups(text.slice(gap + 2));
    head = [...left, ...new Array<number>(width - left.length - right.length).fill(0), ...right];
  } else {
    head = groups(text);
  }
  const all = [...head, ...tail];
  return all.length === 8 && all.every((h) => Number.isInteger(h) && h >= 0 && h <= 0xffff) ? all : null;
}

function mappedIpv4(g: number[]): string | null {
  if (g.slice(0, 5).some((h) => h !== 0) || g[5] !== 0xffff) return null;
  return [g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff].join('.');
}
