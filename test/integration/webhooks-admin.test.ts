import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { startReceiver, WEBHOOK_TEST_ENV, type Receiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
let strict: TestApp;
let r: Receiver;
let superadmin: string;
let admin: string;
beforeAll(async () => {
  t = await startTestApp({ env: WEBHOOK_TEST_ENV });
  // The same database without the opt-ins: what production refuses.
  strict = await startTestApp({ sharing: t, env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_URLS: 'false', WEBHOOK_TIMEOUT: '2' } });
  r = await startReceiver();
  superadmin = (await makeSession(t, { user_type: 'superadmin' })).token;
  admin = (await makeSession(t, { user_type: 'admin' })).token;
});
afterAll(async () => {
  await r?.close();
  await strict?.close();
  await t?.close();
});

describe('the admin webhooks API', () => {
  it('when a superadmin registers, lists and removes an endpoint, then the secret is shown once and both changes are audit events', async () => {
    const created = await t.request('POST', '/auth/admin/webhooks', {
      session: superadmin,
      body: { url: r.url, events: ['user.created', 'sign_in.*'], description: 'CRM sync' },
    });
    expect(created.status).toBe(200);
    const { webhook, secret } = created.body.data;
    expect(secret).toMatch(/^whsec_/);
    expect(webhook).toMatchObject({ url: r.url, events: ['user.created', 'sign_in.*'], description: 'CRM sync', enabled: true, include_ip_user_agent: false });

    const listed = await t.request('GET', '/auth/admin/webhooks', { session: superadmin });
    expect(listed.status).toBe(200);
    expect(listed.body.data.webhooks.map((w: { id: string }) => w.id)).toContain(webhook.id);
    expect(listed.text).not.toContain(secret);
    expect(listed.text).not.toMatch(/sealed|whsec_/);

    const removed = await t.request('DELETE', `/auth/admin/webhooks/${webhook.id}`, { session: superadmin });
    expect(removed.status).toBe(200);
    expect((await t.request('DELETE', `/auth/admin/webhooks/${webhook.id}`, { session: superadmin })).status).toBe(404);

    const events = (await t.app.services.audit.list({ types: ['webhook.*'] })).events.filter((e) => e.details.webhook_id === webhook.id);
    expect(events.map((e) => e.type).sort()).toEqual(['webhook.created', 'webhook.deleted']);
    for (const e of events) expect(e.actor).toMatchObject({ user_type: 'superadmin' });
    expect(JSON.stringify(events)).not.toContain(secret);
  });

  it('when the URL carries a secret in its path or query, then the audit event names only the origin', async () => {
    const res = await t.request('POST', '/auth/admin/webhooks', {
      session: superadmin,
      body: { url: `${r.url}/hooks/s3cr3t-in-path?token=s3cr3t-in-url`, events: ['user.created'] },
    });
    expect(res.status).toBe(200);
    const [event] = (await t.app.services.audit.list({ types: ['webhook.created'] })).events.filter((e) => e.details.webhook_id === res.body.data.webhook.id);
    expect(event.details.origin).toBe(new URL(r.url).origin);
    expect(JSON.stringify(event)).not.toContain('s3cr3t-in-url');
    expect(JSON.stringify(event)).not.toContain('s3cr3t-in-path');
  });

  it('when an admin (not superadmin) or nobody asks, then it is refused', async () => {
    expect((await t.request('GET', '/auth/admin/webhooks', { session: admin })).status).toBe(403);
    expect((await t.request('GET', '/auth/admin/webhooks')).status).toBe(401);
    expect((await t.request('POST', '/auth/admin/webhooks', { session: admin, body: { url: r.url, events: ['*'] } })).status).toBe(403);
  });

  it('when the input is bad, then the answer is 400 with the field, never 500', async () => {
    const bad = [
      {},
      { url: r.url },
      { url: r.url, events: [] },
      { url: r.url, events: ['user.nope'] },
      { url: r.url, events: ['nothing.*'] },
      { url: 'not a url', events: ['*'] },
      { url: 'ftp://example.com/x', events: ['*'] },
      { url: 'http://user:pw@127.0.0.1/x', events: ['*'] },
      { url: r.url, events: ['*'], extra: true },
      { url: r.url, events: 'user.created' },
    ];
    for (const body of bad) {
      const res = await t.request('POST', '/auth/admin/webhooks', { session: superadmin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    }
    expect((await t.request('DELETE', '/auth/admin/webhooks/not-an-id', { session: superadmin })).status).toBe(400);
    expect((await t.request('POST', '/auth/admin/webhooks/deliveries/whe_x/retry', { session: superadmin })).status).toBe(400);
    expect((await t.request('GET', '/auth/admin/webhooks/whe_00000000-0000-0000-0000-000000000000/deliveries', { session: superadmin })).status).toBe(404);
  });

  it('when test, rotate-secret and deliveries are called, then the receiver got a signed webhook.test and the log shows it', async () => {
    const { webhook } = (await t.request('POST', '/auth/admin/webhooks', { session: superadmin, body: { url: r.url, events: ['user.created'] } })).body.data;
    const before = r.received.length;
    const tested = await t.request('POST', `/auth/admin/webhooks/${webhook.id}/test`, { session: superadmin });
    expect(tested.status).toBe(200);
    expect(tested.body.data.delivery).toMatchObject({ status_code: 200, message_status: 'delivered', type: 'webhook.test' });
    expect(r.received.length).toBe(before + 1);
    expect(JSON.parse(r.received.at(-1)!.body).type).toBe('webhook.test');
    const rotated = await t.request('POST', `/auth/admin/webhooks/${webhook.id}/rotate-secret`, { session: superadmin });
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    const log = await t.request('GET', `/auth/admin/webhooks/${webhook.id}/deliveries?limit=5`, { session: superadmin });
    expect(log.body.data.deliveries[0]).toMatchObject({ type: 'webhook.test', status_code: 200 });
  });
});

describe('SSRF', () => {
  it('when WEBHOOK_ALLOW_PRIVATE_URLS is off, then 127.0.0.1, a private and a metadata address are refused at registration', async () => {
    for (const url of [
      r.url,
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest',
      'http://[::1]:8080/x',
      'http://[fd00:ec2::254]/x',
      'http://localhost/x',
    ]) {
      const res = await strict.app.services.webhooks.create({ url, events: ['*'] }).then(
        () => 'accepted',
        (e: { status?: number; message: string }) => `${e.status} ${e.message}`,
      );
      expect(res, url).toMatch(/^400 url: .*(resolves to|WEBHOOK_ALLOW_PRIVATE_URLS)/);
    }
  });

  it('when the URL names a refused IPv4 address inside an IPv6 one (mapped, translated, NAT64, 6to4, Teredo), then it is refused at registration', async () => {
    for (const url of [
      'http://[::ffff:0:7f00:1]:8080/x', // the issue's: IPv4-translated loopback
      'http://[::ffff:0:127.0.0.1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://[64:ff9b::169.254.169.254]/latest',
      'http://[2002:a9fe:a9fe::1]/latest',
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x',
    ]) {
      const res = await strict.request('POST', '/auth/admin/webhooks', { session: superadmin, body: { url, events: ['*'] } });
      expect(res.status, url).toBe(400);
      expect(res.body, url).toMatchObject({ success: false, error: expect.stringMatching(/^url: .*resolves to .*WEBHOOK_ALLOW_PRIVATE_URLS/) });
    }
  });

  it('when an endpoint registered while allowed is sent to by an instance without the opt-in, then the send is refused on the resolved address', async () => {
    const { endpoint } = await t.app.services.webhooks.create({ url: r.url, events: ['user.created'] });
    const before = r.received.length;
    const res = await strict.app.services.webhooks.test(endpoint.id);
    expect(res.delivery.message_status).toBe('failed');
    expect(res.delivery.error).toMatch(/refused: .*127\.0\.0\.1/);
    expect(r.received.length).toBe(before);
  });

  it('when http is not allowed, then an http URL is refused', async () => {
    const https = await startTestApp({ sharing: t, env: { WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
    try {
      await expect(https.app.services.webhooks.create({ url: r.url, events: ['*'] })).rejects.toMatchObject({ status: 400, message: /https/ });
    } finally {
      await https.close();
    }
  });
});

describe('webhook metrics', () => {
  it('when messages wait and attempts end, then /metrics shows the outbox depth, the oldest age and deliveries by outcome', async () => {
    const { endpoint } = await t.app.services.webhooks.create({ url: r.url, events: ['user.deleted'] });
    await t.app.sequelize.transaction((tx) => t.app.services.audit.record({ type: 'user.deleted', userId: null }, { tx }));
    const text = (await t.request('GET', '/metrics')).text;
    expect(text).toMatch(/gatehouse_webhook_outbox_pending [1-9]/);
    expect(text).toMatch(/gatehouse_webhook_oldest_pending_seconds \d/);
    expect(text).toMatch(/gatehouse_webhook_deliveries_total\{outcome="delivered"\} [1-9]/); // the test sends above
    t.app.services.webhooks.startWorker();
    await expect.poll(async () => (await t.app.services.webhooks.deliveries(endpoint.id)).length).toBeGreaterThan(0);
    await t.app.services.webhooks.stopWorker();
    await expect.poll(async () => (await t.request('GET', '/metrics')).text).toMatch(/gatehouse_webhook_outbox_pending 0/);
  });
});
