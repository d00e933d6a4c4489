import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withAuditScope } from '../../src/audit/audit-scope.js';
import { makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { startReceiver, WEBHOOK_TEST_ENV, type Receiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await startTestApp({ env: WEBHOOK_TEST_ENV });
  t.app.services.webhooks.startWorker();
});
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
  for (const e of await hooks().list()) await hooks().remove(e.id);
});
afterAll(async () => {
  await t?.close();
});

const hooks = () => t.app.services.webhooks;
async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

/** A user.created event about a fresh user, written as the user service would: in a transaction. */
async function userCreated() {
  const user = await makeUser(t);
  const scope = { actor: null, ip: '203.0.113.5', userAgent: 'Admin-Console/1.0', requestId: 'req-1' };
  await withAuditScope(scope, () =>
    t.app.sequelize.transaction((tx) => t.app.services.audit.record({ type: 'user.created', userId: user.id, details: { via: 'admin' } }, { tx })),
  );
  return user;
}

const verify = (secret: string, r: { headers: Record<string, unknown>; body: string }) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; timestamp: string; data: Record<string, unknown> };

describe('webhook delivery', () => {
  it('when an admin creates a user over the API, then the receiver gets that user.created POST signed per Standard Webhooks, without ip and agent', async () => {
    const r = await receiver();
    const { secret } = await hooks().create({ url: r.url, events: ['user.created'] });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{40,}={0,2}$/);
    const admin = await makeSession(t, { user_type: 'admin' });
    const created = await t.request('POST', '/auth/admin/users', {
      session: admin.token,
      headers: { 'X-Request-ID': 'req-created-1' },
      body: { email: uniqueEmail('hooked'), password: 'Correct-Horse-42', name: 'Hooked' },
    });
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
    const userId = (created.body.user ?? created.body.data?.user ?? created.body.data).id as string;
    await expect.poll(() => r.received.length).toBe(1);
    const [got] = r.received;
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toMatch(/^msg_/);
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    const payload = verify(secret, got);
    expect(payload.type).toBe('user.created');
    expect(payload.data).toMatchObject({
      type: 'user.created',
      user_id: userId,
      actor: { id: admin.user.id, user_type: 'admin' },
      request_id: 'req-created-1',
      details: { via: 'admin' },
    });
    expect(payload.data).not.toHaveProperty('ip');
    expect(payload.data).not.toHaveProperty('user_agent');
    expect(got.body).not.toContain('Correct-Horse-42');
    expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, got)).toThrow();
    await expect.poll(async () => (await hooks().deliveries((await hooks().list())[0].id))[0]?.message_status).toBe('delivered');
  });

  it('when an endpoint subscribes to a family or to everything, then it gets the family; an endpoint on another type gets nothing', async () => {
    const fam = await receiver();
    const other = await receiver();
    await hooks().create({ url: fam.url, events: ['user.*'] });
    await hooks().create({ url: other.url, events: ['password.changed'] });
    await userCreated();
    await expect.poll(() => fam.received.length).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(other.received).toHaveLength(0);
  });

  it('when the event rolls back, then no message is sent', async () => {
    const r = await receiver();
    await hooks().create({ url: r.url, events: ['user.updated'] });
    const user = await makeUser(t);
    await expect(
      t.app.sequelize.transaction(async (tx) => {
        await t.app.services.audit.record({ type: 'user.updated', userId: user.id, details: { fields: ['name'] } }, { tx });
        throw new Error('change failed');
      }),
    ).rejects.toThrow('change failed');
    expect((await hooks().pendingStats()).pending).toBe(0);
    await new Promise((res) => setTimeout(res, 300));
    expect(r.received).toHaveLength(0);
  });

  it('when the receiver answers 500 and then 200, then the message arrives again with the same webhook-id and is delivered', async () => {
    const r = await receiver({ kind: 'status', status: 500 });
    const { endpoint, secret } = await hooks().create({ url: r.url, events: ['user.created'] });
    await userCreated();
    await expect.poll(() => r.received.length).toBeGreaterThanOrEqual(2);
    r.setMode({ kind: 'status', status: 204 });
    await expect.poll(async () => (await hooks().deliveries(endpoint.id))[0]?.message_status, { timeout: 10_000 }).toBe('delivered');
    const ids = new Set(r.received.map((x) => x.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const x of r.received) expect(verify(secret, x).type).toBe('user.created');
    const log = await hooks().deliveries(endpoint.id);
    expect(log.find((d) => d.status_code === 500)).toMatchObject({ error: 'answered 500' });
    expect(log.find((d) => d.status_code === 500)!.response_body!.length).toBeLessThanOrEqual(1024);
  });

  it('when the receiver is down (closed port) for a while and comes back, then the message is delivered later with the same webhook-id', async () => {
    const r = await receiver();
    const url = r.url;
    await r.close();
    receivers.splice(receivers.indexOf(r), 1);
    const { endpoint } = await hooks().create({ url, events: ['user.created'] });
    await userCreated();
    await expect.poll(async () => (await hooks().deliveries(endpoint.id)).length).toBeGreaterThanOrEqual(1);
    expect((await hooks().deliveries(endpoint.id))[0].error).toMatch(/ECONNREFUSED/);
    const back = await startReceiverOn(r.port);
    await expect.poll(() => back.received.length, { timeout: 10_000 }).toBe(1);
    const firstId = (await hooks().deliveries(endpoint.id)).at(-1)!.message_id;
    expect(back.received[0].headers['webhook-id']).toBe(firstId);
  });

  it('when every try fails, then the message is failed after the schedule, and retry sends it again with the same webhook-id', async () => {
    const r = await receiver({ kind: 'status', status: 503 });
    const { endpoint } = await hooks().create({ url: r.url, events: ['user.created'] });
    await userCreated();
    await expect.poll(async () => (await hooks().deliveries(endpoint.id))[0]?.message_status, { timeout: 10_000 }).toBe('failed');
    expect(r.received).toHaveLength(4); // WEBHOOK_RETRY_SCHEDULE has four entries
    const last = (await hooks().deliveries(endpoint.id))[0];
    r.setMode({ kind: 'status', status: 200 });
    await hooks().retry(last.id);
    await expect.poll(async () => (await hooks().deliveries(endpoint.id))[0]?.message_status).toBe('delivered');
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
  });

  it('when the secret is rotated, then deliveries carry two signatures, each verifying with its secret', async () => {
    const r = await receiver();
    const { endpoint, secret: oldSecret } = await hooks().create({ url: r.url, events: ['user.created'] });
    const { secret: newSecret } = await hooks().rotateSecret(endpoint.id);
    expect(newSecret).not.toBe(oldSecret);
    await userCreated();
    await expect.poll(() => r.received.length).toBe(1);
    const sigs = String(r.received[0].headers['webhook-signature']).split(' ');
    expect(sigs).toHaveLength(2);
    expect(verify(newSecret, r.received[0]).type).toBe('user.created');
    expect(verify(oldSecret, r.received[0]).type).toBe('user.created');
  });

  it('when the receiver holds the request past the timeout, then the attempt fails as a timeout and is retried', async () => {
    const r = await receiver({ kind: 'hang' });
    const { endpoint } = await hooks().create({ url: r.url, events: ['user.created'] });
    await userCreated();
    await expect.poll(async () => (await hooks().deliveries(endpoint.id))[0]?.error, { timeout: 10_000 }).toMatch(/timed out after 2000 ms/);
    r.setMode({ kind: 'status', status: 200 });
    await expect.poll(async () => (await hooks().deliveries(endpoint.id))[0]?.message_status, { timeout: 10_000 }).toBe('delivered');
  });

  it('when the receiver answers a redirect, then it is not followed and counts as a failure', async () => {
    const target = await receiver();
    const r = await receiver({ kind: 'status', status: 302, location: target.url });
    const { endpoint } = await hooks().create({ url: r.url, events: ['user.created'] });
    await userCreated();
    await expect.poll(async () => (await hooks().deliveries(endpoint.id))[0]?.status_code).toBe(302);
    expect((await hooks().deliveries(endpoint.id))[0].error).toMatch(/redirect/);
    expect(target.received).toHaveLength(0);
  });

  it('when an endpoint opted in to ip and user agent, then its data carries them', async () => {
    const r = await receiver();
    const { secret } = await hooks().create({ url: r.url, events: ['user.created'], include_ip_user_agent: true });
    await userCreated();
    await expect.poll(() => r.received.length).toBe(1);
    expect(verify(secret, r.received[0]).data).toMatchObject({ ip: '203.0.113.5', user_agent: 'Admin-Console/1.0', request_id: 'req-1' });
  });
});

async function startReceiverOn(port: number) {
  const http = await import('node:http');
  const received: { headers: Record<string, unknown>; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  receivers.push({ close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) } as Receiver);
  return { received };
}
