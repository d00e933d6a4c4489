import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckContext } from '../../src/cli/checks/check.js';
import { webhooksCheck } from '../../src/cli/checks/webhooks.js';
import { BACKEND } from '../helpers/backend.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { startReceiver, WEBHOOK_TEST_ENV, type Receiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
let r: Receiver;
let offset = 0;
beforeAll(async () => {
  t = await startTestApp({ env: WEBHOOK_TEST_ENV, clock: () => new Date(Date.now() + offset) });
  r = await startReceiver({ kind: 'status', status: 500 });
});
afterAll(async () => {
  await t?.app.services.webhooks.stopWorker();
  await r?.close();
  await t?.close();
});

const hooks = () => t.app.services.webhooks;
const doctor = () => webhooksCheck.run(createCheckContext({ config: t.app.config, logger: t.app.logger, openApp: async () => t.app }));
const record = (type: string) => t.app.sequelize.transaction((tx) => t.app.services.audit.record({ type, userId: null }, { tx }));

describe(`an endpoint failing for days (${BACKEND})`, () => {
  it('when every delivery has failed for 5 days, then the endpoint is disabled, its pending messages failed, and doctor reports it; enabled and retried, it delivers', async () => {
    const { endpoint } = await hooks().create({ url: r.url, events: ['user.deleted'] });
    expect(await doctor()).toMatchObject({ status: 'ok' });
    hooks().startWorker();
    await record('user.deleted');
    await expect.poll(async () => (await hooks().get(endpoint.id)).failing_since).not.toBeNull();
    offset = 5 * 86_400_000 + 60_000; // five days on: the next failure disables it
    await expect.poll(async () => (await hooks().get(endpoint.id)).enabled, { timeout: 10_000 }).toBe(false);
    const disabled = await hooks().get(endpoint.id);
    expect(disabled.disabled_reason).toMatch(/5 days/);
    expect(await doctor()).toMatchObject({ status: 'warn', message: expect.stringContaining(endpoint.id) });

    // Disabled: new events are not queued for it.
    await record('user.deleted');
    expect((await hooks().pendingStats()).pending).toBe(0);

    r.setMode({ kind: 'status', status: 200 });
    await hooks().setEnabled(endpoint.id, true);
    const last = (await hooks().deliveries(endpoint.id))[0];
    expect(last.message_status).toBe('failed');
    await hooks().retry(last.message_id);
    await expect.poll(async () => (await hooks().deliveries(endpoint.id))[0]?.message_status).toBe('delivered');
    expect((await hooks().get(endpoint.id)).failing_since).toBeNull();
    expect(await doctor()).toMatchObject({ status: 'ok' });
  });

  it('when the log is pruned, then delivery lines and finished messages older than the retention go, pending ones stay', async () => {
    const { endpoint } = await hooks().create({ url: r.url, events: ['user.enabled'] });
    await record('user.enabled');
    await expect.poll(async () => (await hooks().deliveries(endpoint.id))[0]?.message_status).toBe('delivered');
    await hooks().stopWorker();
    await record('user.enabled'); // stays pending: no worker
    offset += 40 * 86_400_000;
    expect(await hooks().pruneWebhookLog(30)).toBeGreaterThan(0);
    expect(await hooks().deliveries(endpoint.id)).toEqual([]);
    expect((await hooks().pendingStats()).pending).toBe(1);
  });
});
