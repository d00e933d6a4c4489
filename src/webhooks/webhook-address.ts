import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { badRequest } from '../errors/app-error.js';

/**
 * SSRF guard for webhook URLs. A receiver's address must be public: loopback, private, link-local
 * (with the cloud metadata address), CGNAT, unspecified, multicast and reserved ranges are refused
 * unless WEBHOOK_ALLOW_PRIVATE_URLS is set. The check runs at registration and again at every send, on
 * the resolved address, and the request connects to the very address that was checked (`pinnedLookup`),
 * so a name that resolves elsewhere between the check and the connection (DNS rebinding) gains nothing.
 */

export interface UrlPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

const refused = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // unspecified, "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, 169.254.169.254 metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  refused.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local, fd00:ec2::254 (AWS metadata) among them
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['100::', 64], // discard
  ['fec0::', 10], // site-local (deprecated)
  // Whole ranges whose embedded IPv4 address a check cannot trust, refused whatever it carries:
  ['::', 96], // IPv4-compatible (deprecated): ::127.0.0.1 would reach the loopback on some hosts
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): the translator's prefix length is the site's own
  ['2002::', 16], // 6to4 (deprecated, RFC 7526): carries an IPv4 address, a relay turns it into
] as const)
  refused.addSubnet(net, prefix, 'ipv6');

/** The 16 bytes of a valid IPv6 address in any notation (`::` anywhere, a dotted IPv4 tail). */
function v6Bytes(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    text = dotted[1].endsWith('::') ? dotted[1] : dotted[1].slice(0, -1);
    tail.push(...dotted[2].split('.').map(Number));
  }
  const groups = (part: string) => (part ? part.split(':').flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 255]) : []);
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const front = groups(head);
  const back = [...groups(rest ?? ''), ...tail];
  return [...front, ...Array(16 - front.length - back.length).fill(0), ...back];
}

const v4At = (b: number[], at: number[]) => at.map((i) => b[i]).join('.');
const LAST_32 = [12, 13, 14, 15];
const starts = (b: number[], prefix: number[]) => prefix.every((x, i) => b[i] === x);
const zeros = (n: number) => Array(n).fill(0);

/**
 * Every IPv4 address an IPv6 one carries, in the forms that reach IPv4 hosts: mapped `::ffff:a.b.c.d`,
 * translated `::ffff:0:a.b.c.d` (RFC 2765), the NAT64 well-known prefix `64:ff9b::/96` (RFC 6052), the
 * local-use NAT64 prefix `64:ff9b:1::/48` at each RFC 6052 prefix length, IPv4-compatible `::a.b.c.d`,
 * 6to4 `2002:AABB:CCDD::/48`, and Teredo `2001:0::/32` (the server's address, and the client's,
 * stored inverted in the last 32 bits).
 */
export function embeddedV4(address: string): string[] {
  const b = v6Bytes(address);
  const out: string[] = [];
  if (starts(b, [...zeros(10), 0xff, 0xff])) out.push(v4At(b, LAST_32)); // mapped
  if (starts(b, [...zeros(8), 0xff, 0xff, 0, 0])) out.push(v4At(b, LAST_32)); // translated
  if (starts(b, zeros(12))) out.push(v4At(b, LAST_32)); // IPv4-compatible (and ::, ::1)
  if (starts(b, [0, 0x64, 0xff, 0x9b, ...zeros(8)])) out.push(v4At(b, LAST_32)); // NAT64 well-known
  if (starts(b, [0, 0x64, 0xff, 0x9b, 0, 1])) {
    // RFC 6052 §2.2: /48, /56, /64 and /96 (bits 64–71 are always zero, skipped).
    out.push(v4At(b, [6, 7, 9, 10]), v4At(b, [7, 9, 10, 11]), v4At(b, [9, 10, 11, 12]), v4At(b, LAST_32));
  }
  if (starts(b, [0x20, 0x02])) out.push(v4At(b, [2, 3, 4, 5])); // 6to4
  if (starts(b, [0x20, 0x01, 0, 0])) {
    out.push(v4At(b, [4, 5, 6, 7])); // Teredo server
    out.push(LAST_32.map((i) => b[i] ^ 0xff).join('.')); // Teredo client, obfuscated
  }
  return out;
}

/** Whether an IP address is one a webhook may not reach without WEBHOOK_ALLOW_PRIVATE_URLS. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return true;
  if (family === 4) return refused.check(bare, 'ipv4');
  // Any form that carries a refused IPv4 address is refused, whatever else it is.
  if (embeddedV4(bare).some((v4) => refused.check(v4, 'ipv4'))) return true;
  return refused.check(bare, 'ipv6');
}

const field = (message: string) => badRequest(`url: ${message}`, [{ field: 'url', message }]);

/** Parses and checks a URL's form: scheme, no credentials, a host. Throws 400. */
export function parseWebhookUrl(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw field('not a URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw field(policy.allowHttp ? 'must be an http or https URL' : 'must be an https URL (http only with WEBHOOK_ALLOW_HTTP=true)');
  }
  if (url.username || url.password) throw field('must not carry credentials');
  if (!url.hostname) throw field('has no host');
  if (raw.length > 2048) throw field('is longer than 2048 characters');
  return url;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))));
}

/**
 * Every address the URL's host resolves to, checked; throws 400 naming the refused one. Refusing the
 * name when any of its addresses is refused means the connection can take none of them.
 */
export async function checkedAddresses(url: URL, policy: UrlPolicy): Promise<LookupAddress[]> {
  const host = hostOf(url);
  const family = isIP(host);
  let addrs: LookupAddress[];
  if (family) addrs = [{ address: host, family }];
  else {
    try {
      addrs = await resolveAll(host);
    } catch (err) {
      throw field(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
    }
  }
  if (!addrs.length) throw field(`${host} does not resolve`);
  if (!policy.allowPrivate) {
    const bad = addrs.find((a) => isForbiddenAddress(a.address));
    if (bad)
      throw field(
        `${host} resolves to ${bad.address}, a loopback, private, link-local or otherwise non-public address (allowed only with WEBHOOK_ALLOW_PRIVATE_URLS=true)`,
      );
  }
  return addrs;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the HTTP agent that answers only the addresses already checked: the socket connects
 * to what was checked, never to what a second resolution would say.
 */
export function pinnedLookup(addrs: LookupAddress[]) {
  return (_host: string, options: { all?: boolean; family?: number | string } | number, cb: LookupCallback) => {
    const opts = typeof options === 'object' ? options : { family: options };
    const fam = opts.family === 'IPv4' ? 4 : opts.family === 'IPv6' ? 6 : Number(opts.family) || 0;
    const usable = fam ? addrs.filter((a) => a.family === fam) : addrs;
    if (!usable.length) {
      const err: NodeJS.ErrnoException = new Error('no checked address of the asked family');
      err.code = 'ENOTFOUND';
      return cb(err, '', 0);
    }
    if (opts.all) return cb(null, usable);
    cb(null, usable[0].address, usable[0].family);
  };
}
