import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { embeddedV4, isForbiddenAddress, parseWebhookUrl, pinnedLookup } from '../../src/webhooks/webhook-address.js';
import { subscribes, webhookBody } from '../../src/webhooks/webhook-service.js';
import { newSecret, signatureHeader } from '../../src/webhooks/webhook-signing.js';
import { afterFailure } from '../../src/webhooks/webhook-worker.js';

describe('webhook signatures', () => {
  it('when signed with one secret or two, then the standardwebhooks reference verifies each secret, and a changed body fails', () => {
    const a = newSecret();
    const b = newSecret();
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    const ts = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'user.created', timestamp: new Date().toISOString(), data: { x: 1 } });
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(ts), 'webhook-signature': signatureHeader([a, b], 'msg_1', ts, body) };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(a).verify(body, headers)).toMatchObject({ type: 'user.created' });
    expect(new Webhook(b).verify(body, headers)).toMatchObject({ type: 'user.created' });
    expect(() => new Webhook(a).verify(body.replace('1', '2'), headers)).toThrow();
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
  });
});

describe('the SSRF guard', () => {
  it('when an address is loopback, private, link-local, CGNAT, metadata, unspecified or multicast (v4, v6 or mapped), then it is forbidden', () => {
    for (const ip of [
      '127.0.0.1',
      '127.8.9.10',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::10.0.0.1',
      '::127.0.0.1',
      '::7f00:1',
      '64:ff9b:1::a00:1',
      '2002:c0a8:101::1',
      'fec0::1',
      'not-an-ip',
    ])
      expect(isForbiddenAddress(ip), ip).toBe(true);
  });

  it('when an address is public, then it is allowed', () => {
    for (const ip of ['93.184.216.34', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(isForbiddenAddress(ip), ip).toBe(false);
  });

  /*
   * Every IPv6 form that carries an IPv4 address, with a refused one inside (127.0.0.1 = 7f00:1,
   * 10.0.0.1 = a00:1, 169.254.169.254 = a9fe:a9fe, 192.168.1.1 = c0a8:101), in hex and, where the form
   * allows it, dotted (a URL's host comes hex: new URL turns [::ffff:0:127.0.0.1] into [::ffff:0:7f00:1]).
   */
  describe.each([
    [
      'IPv4-mapped ::ffff:0:0/96',
      [
        ['::ffff:7f00:1', '127.0.0.1'],
        ['::ffff:127.0.0.1', '127.0.0.1'],
        ['0:0:0:0:0:ffff:7f00:1', '127.0.0.1'],
        ['::FFFF:A9FE:A9FE', '169.254.169.254'],
        ['::ffff:169.254.169.254', '169.254.169.254'],
        ['::ffff:c0a8:101', '192.168.1.1'],
      ],
    ],
    [
      'IPv4-translated ::ffff:0:0:0/96 (RFC 2765)',
      [
        ['::ffff:0:7f00:1', '127.0.0.1'],
        ['::ffff:0:127.0.0.1', '127.0.0.1'],
        ['0:0:0:0:ffff:0:a00:1', '10.0.0.1'],
        ['0:0:0:0:ffff:0:10.0.0.1', '10.0.0.1'],
        ['::ffff:0:a9fe:a9fe', '169.254.169.254'],
        ['::ffff:0:169.254.169.254', '169.254.169.254'],
      ],
    ],
    [
      'NAT64 well-known 64:ff9b::/96 (RFC 6052)',
      [
        ['64:ff9b::7f00:1', '127.0.0.1'],
        ['64:ff9b::127.0.0.1', '127.0.0.1'],
        ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
        ['64:ff9b::169.254.169.254', '169.254.169.254'],
        ['64:ff9b:0:0:0:0:c0a8:101', '192.168.1.1'],
      ],
    ],
    [
      'NAT64 local-use 64:ff9b:1::/48 (RFC 8215), at the /96, /64, /56 and /48 embeddings',
      [
        ['64:ff9b:1::7f00:1', '127.0.0.1'],
        ['64:ff9b:1::127.0.0.1', '127.0.0.1'],
        ['64:ff9b:1:0:7f:0:100::', '127.0.0.1'],
        ['64:ff9b:1:7f:0:1::', '127.0.0.1'],
        ['64:ff9b:1:7f00:0:100::', '127.0.0.1'],
      ],
    ],
    [
      'IPv4-compatible ::/96 (deprecated)',
      [
        ['::7f00:1', '127.0.0.1'],
        ['::127.0.0.1', '127.0.0.1'],
        ['::a00:1', '10.0.0.1'],
        ['::10.0.0.1', '10.0.0.1'],
        ['::a9fe:a9fe', '169.254.169.254'],
        ['::169.254.169.254', '169.254.169.254'],
      ],
    ],
    [
      '6to4 2002::/16 (the IPv4 address in bits 16–48; no dotted form)',
      [
        ['2002:7f00:1::1', '127.0.0.1'],
        ['2002:a00:1::', '10.0.0.1'],
        ['2002:a9fe:a9fe::1', '169.254.169.254'],
        ['2002:c0a8:101::1', '192.168.1.1'],
        ['2002:c0a8:101:0:0:0:8.8.8.8', '192.168.1.1'],
      ],
    ],
    [
      'Teredo 2001:0::/32 (the client inverted in the last 32 bits, the server in bits 32–64)',
      [
        ['2001:0:4136:e378:8000:63bf:80ff:fffe', '127.0.0.1'],
        ['2001:0:4136:e378:8000:63bf:128.255.255.254', '127.0.0.1'],
        ['2001::4136:e378:8000:63bf:f5ff:fffe', '10.0.0.1'],
        ['2001:0:4136:e378:8000:63bf:5601:5601', '169.254.169.254'],
        ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '192.0.2.45'], // RFC 4380's example: a documentation address
        ['2001:0:a00:1:8000:63bf:f7f7:f7f7', '10.0.0.1'], // the server's (the client is 8.8.8.8)
      ],
    ],
  ])('an IPv4 address embedded as %s', (_form, addresses) => {
    it.each(addresses)('when the address is %s (carrying %s), then it is forbidden, bare and bracketed', (ip, v4) => {
      expect(embeddedV4(ip)).toContain(v4);
      expect(isForbiddenAddress(ip)).toBe(true);
      expect(isForbiddenAddress(`[${ip}]`)).toBe(true);
    });
  });

  it('when a public IPv4 address is embedded in a form that reaches it as such, then it is allowed; the deprecated and local-use ranges stay refused whole', () => {
    for (const ip of ['::ffff:808:808', '::ffff:0:808:808', '::ffff:0:8.8.8.8', '64:ff9b::808:808', '64:ff9b::8.8.8.8', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'])
      expect(isForbiddenAddress(ip), ip).toBe(false);
    for (const ip of ['::808:808', '::8.8.8.8', '64:ff9b:1::808:808', '2002:808:808::1']) expect(isForbiddenAddress(ip), ip).toBe(true);
  });

  it("when an address is in one of IPv6's own refused ranges, then it stays forbidden", () => {
    for (const ip of [
      '::1',
      '::',
      '0:0:0:0:0:0:0:1',
      'fe80::1',
      'fe80::1%eth0',
      'fd00:ec2::254',
      'fc00::1',
      'ff02::1',
      '2001:db8::1',
      '3fff::1',
      '100::1',
      'fec0::1',
    ])
      expect(isForbiddenAddress(ip), ip).toBe(true);
  });

  it('when a URL is not https, carries credentials or is no URL, then it is refused unless http is allowed', () => {
    const strict = { allowHttp: false, allowPrivate: false };
    expect(() => parseWebhookUrl('http://example.com/x', strict)).toThrow(/https/);
    expect(() => parseWebhookUrl('https://u:p@example.com/x', strict)).toThrow(/credentials/);
    expect(() => parseWebhookUrl('nope', strict)).toThrow(/not a URL/);
    expect(() => parseWebhookUrl('javascript:alert(1)', { allowHttp: true, allowPrivate: true })).toThrow();
    expect(parseWebhookUrl('http://example.com/x', { allowHttp: true, allowPrivate: false }).hostname).toBe('example.com');
  });

  it('when the agent looks the host up, then only the checked addresses are answered', () => {
    const lookup = pinnedLookup([{ address: '93.184.216.34', family: 4 }]);
    lookup('evil.example', { all: true }, (err, addrs) => expect([err, addrs]).toEqual([null, [{ address: '93.184.216.34', family: 4 }]]));
    lookup('evil.example', {}, (err, addr, fam) => expect([err, addr, fam]).toEqual([null, '93.184.216.34', 4]));
    lookup('evil.example', { family: 6 }, (err) => expect(err?.code).toBe('ENOTFOUND'));
  });
});

describe('subscriptions, bodies and the schedule', () => {
  it('when an endpoint names a type, a family or *, then it takes exactly those', () => {
    expect(subscribes(['user.created'], 'user.created')).toBe(true);
    expect(subscribes(['user.created'], 'user.updated')).toBe(false);
    expect(subscribes(['user.*'], 'user.updated')).toBe(true);
    expect(subscribes(['user.*'], 'users_x.created')).toBe(false);
    expect(subscribes(['sign_in.*'], 'sign_out')).toBe(false);
    expect(subscribes(['*'], 'anything')).toBe(true);
  });

  it('when the body is built, then ip, agent and identifier are left out unless the endpoint opted in', () => {
    const event = {
      id: 'e',
      type: 'user.created',
      at: '2026-11-26T12:00:00.000Z',
      outcome: 'success' as const,
      actor: null,
      user_id: 'u',
      ip: '1.2.3.4',
      user_agent: 'UA',
      request_id: 'r',
      details: {},
    };
    expect(JSON.parse(webhookBody(event, false))).toEqual({
      type: 'user.created',
      timestamp: event.at,
      data: { id: 'e', type: 'user.created', at: event.at, outcome: 'success', actor: null, user_id: 'u', request_id: 'r', details: {} },
    });
    expect(JSON.parse(webhookBody(event, true)).data).toMatchObject({ ip: '1.2.3.4', user_agent: 'UA' });
    // An unknown account's address (or a previous email) names a person too.
    const named = { ...event, type: 'sign_in.failed', details: { reason: 'unknown_account', identifier: 'who@example.test' } };
    expect(JSON.parse(webhookBody(named, false)).data.details).toEqual({ reason: 'unknown_account' });
    expect(JSON.parse(webhookBody(named, true)).data.details).toEqual({ reason: 'unknown_account', identifier: 'who@example.test' });
  });

  it('when attempts fail, then the next follows the schedule and the last one fails the message', () => {
    const schedule = [0, 5, 300, 1800, 7200, 18000, 36000, 36000];
    const now = new Date('2026-11-26T12:00:00Z');
    expect(afterFailure(1, schedule, now)).toEqual({ status: 'pending', next: new Date(now.getTime() + 5_000) });
    expect(afterFailure(2, schedule, now)).toEqual({ status: 'pending', next: new Date(now.getTime() + 300_000) });
    expect(afterFailure(7, schedule, now)).toEqual({ status: 'pending', next: new Date(now.getTime() + 36_000_000) });
    expect(afterFailure(8, schedule, now)).toEqual({ status: 'failed' });
  });
});
