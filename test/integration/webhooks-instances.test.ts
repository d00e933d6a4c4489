import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { startReceiver, WEBHOOK_TEST_ENV, type Receiver } from '../helpers/webhook-receiver.js';

let a: TestApp;
let b: TestApp;
let r: Receiver;
beforeAll(async () => {
  a = await startTestApp({ env: WEBHOOK_TEST_ENV });
  b = await startTestApp({ sharing: a });
  r = await startReceiver();
});
afterAll(async () => {
  await r?.close();
  await b?.close();
  await a?.close();
});

describe(`two instances on one database (${BACKEND})`, () => {
  it('when both run the worker over the same outbox, then each message is delivered once, by one of them', async () => {
    const { endpoint } = await a.app.services.webhooks.create({ url: r.url, events: ['user.updated'] });
    const N = 40;
    // Written before either worker runs, so both find the whole backlog due at once.
    for (let i = 0; i < N; i++) {
      const app = (i % 2 ? a : b).app;
      await app.sequelize.transaction((tx) => app.services.audit.record({ type: 'user.updated', userId: null, details: { fields: [`f${i}`] } }, { tx }));
    }
    a.app.services.webhooks.startWorker();
    b.app.services.webhooks.startWorker();
    await expect.poll(() => r.received.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(N);
    await expect.poll(async () => (await a.app.services.webhooks.pendingStats()).pending).toBe(0);
    await new Promise((res) => setTimeout(res, 500));
    const ids = r.received.map((x) => String(x.headers['webhook-id']));
    expect(ids).toHaveLength(N);
    expect(new Set(ids).size).toBe(N);
    const log = await a.app.services.webhooks.deliveries(endpoint.id, 200);
    expect(log).toHaveLength(N);
    expect(log.every((d) => d.attempt === 1 && d.message_status === 'delivered')).toBe(true);
  });
});
