import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { isForbiddenAddress, parseWebhookUrl, pinnedLookup } from '../../src/webhooks/webhook-address.js';
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
