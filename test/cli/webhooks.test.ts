import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { json, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const LOCAL = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT: '3', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1' };

let dir: string;
let r: Receiver;
beforeAll(async () => {
  dir = tempDir();
  expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
  r = await startReceiver({ kind: 'hang' });
});
afterEach(stopStartedClis);
afterAll(async () => {
  await r?.close();
  removeTempDirs();
});

const webhook = (args: string[], env: Record<string, string> = LOCAL) => runCli(['webhook', ...args, '--data-dir', dir, '--json'], { env });

describe('gatehouse webhook', () => {
  it('when given bad input, then it exits 2 with a JSON error; an unknown id exits 1', async () => {
    for (const args of [
      ['add', '--url', r.url, '--events', 'no.such_type'],
      ['add', '--url', r.url, '--events', ''],
      ['add', '--url', 'ftp://x.example', '--events', '*'],
      ['add', '--events', '*'],
      ['remove', 'not-an-id'],
      ['retry', 'whe_1'],
      ['deliveries', 'whe_00000000-0000-0000-0000-000000000000', '--limit', '0'],
    ]) {
      const res = await webhook(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(json(res)).toMatchObject({ success: false });
    }
    const unknown = await webhook(['remove', 'whe_00000000-0000-0000-0000-000000000000']);
    expect(unknown.code).toBe(1);
    expect(json(unknown).error).toMatch(/No webhook endpoint/);
  });

  it('when 127.0.0.1 is registered without WEBHOOK_ALLOW_PRIVATE_URLS, then it is refused', async () => {
    const res = await webhook(['add', '--url', r.url, '--events', '*'], { WEBHOOK_ALLOW_HTTP: 'true' });
    expect(res.code).toBe(2);
    expect(json(res).error).toMatch(/127\.0\.0\.1.*WEBHOOK_ALLOW_PRIVATE_URLS/);
  });

  it('when the server is killed with SIGKILL mid-delivery, then after a restart the message is delivered with the same webhook-id', async () => {
    const added = await webhook(['add', '--url', r.url, '--events', 'webhook.*', '--description', 'crash test']);
    expect(added.code).toBe(0);
    const { id, url, events, secret } = json(added);
    expect({ url, events }).toEqual({ url: r.url, events: ['webhook.*'] });
    expect(secret).toMatch(/^whsec_/);
    const listed = json(await webhook(['list']));
    expect(listed.webhooks.map((w: { id: string }) => w.id)).toContain(id);
    expect(JSON.stringify(listed)).not.toContain(secret);

    // Registering it wrote webhook.created, which this very endpoint subscribes to: one message waits.
    const first = startCli(['serve', '--port', '0', '--data-dir', dir], { env: LOCAL });
    await first.waitFor(LISTENING);
    await expect.poll(() => r.received.length, { timeout: 15_000 }).toBe(1); // held open by the receiver
    const webhookId = r.received[0].headers['webhook-id'];
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    r.setMode({ kind: 'status', status: 200 });
    const second = startCli(['serve', '--port', '0', '--data-dir', dir], { env: LOCAL });
    await second.waitFor(LISTENING);
    // The dead process's lease (timeout + 5 s) lapses, then the message is claimed again.
    await expect.poll(() => r.received.length, { timeout: 30_000 }).toBe(2);
    expect(r.received[1].headers['webhook-id']).toBe(webhookId);
    expect(JSON.parse(r.received[1].body).type).toBe('webhook.created');
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);

    const log = json(await webhook(['deliveries', id]));
    expect(log.deliveries[0]).toMatchObject({ message_id: webhookId, status_code: 200, message_status: 'delivered' });
  });

  it('when test, rotate-secret, retry and remove run, then each answers JSON and exits 0', async () => {
    const { id } = json(await webhook(['add', '--url', r.url, '--events', 'user.created']));
    const tested = await webhook(['test', id]);
    expect(tested.code).toBe(0);
    expect(json(tested).delivery).toMatchObject({ status_code: 200, message_status: 'delivered' });
    const rotated = await webhook(['rotate-secret', id]);
    expect(rotated.code).toBe(0);
    expect(json(rotated).secret).toMatch(/^whsec_/);
    const retried = await webhook(['retry', json(tested).delivery.id]);
    expect(retried.code).toBe(0);
    expect(json(retried).message).toMatchObject({ id: json(tested).message_id, status: 'pending' });
    expect((await webhook(['remove', id])).code).toBe(0);
  });

  it('when serve gets SIGTERM while a delivery is held open, then the request is aborted and the process exits 0 within the shutdown deadline', async () => {
    const held = await startReceiver({ kind: 'hang' });
    try {
      const env = { ...LOCAL, WEBHOOK_TIMEOUT: '60', SHUTDOWN_TIMEOUT: '2' };
      const { id } = json(await webhook(['add', '--url', held.url, '--events', 'webhook.*'], env));
      const s = startCli(['serve', '--port', '0', '--data-dir', dir], { env });
      await s.waitFor(LISTENING);
      await expect.poll(() => held.received.length, { timeout: 15_000 }).toBeGreaterThan(0);
      const started = Date.now();
      s.child.kill('SIGTERM');
      expect((await s.exited).code).toBe(0);
      expect(Date.now() - started).toBeLessThan(7_000);
      // Aborted, not failed: no attempt is logged, the message stays pending for the next worker.
      expect(json(await webhook(['deliveries', id], env)).deliveries).toEqual([]);
    } finally {
      await held.close();
    }
  });
});
