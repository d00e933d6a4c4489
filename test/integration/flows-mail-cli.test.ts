import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSmtp } from '../../src/cli/checks/smtp.js';
import { runMailTest } from '../../src/cli/commands/mail-test.js';
import { loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log/logger.js';
import { appWithMail } from '../helpers/app-with-mail.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { mailTo } from './flows-helpers.js';

const { t, smtp: sink } = appWithMail({ env: { PRODUCT_NAME: 'Acme ID' } });
/** No SMTP_URL: mail goes to the outbox. */
let outboxApp: TestApp;
const logger = createLogger('silent');

beforeAll(async () => {
  outboxApp = await startTestApp();
});

afterAll(async () => {
  await outboxApp?.close();
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const config = (env: Record<string, string>) => loadConfig({ env: { GATEHOUSE_DATA_DIR: t.dataDir, ...env }, skipFile: true });

describe('mail test command', () => {
  it('when SMTP is configured, then the test message reaches the server and its id is returned', async () => {
    const r = await runMailTest(t.app, 'ops@example.test');
    expect(r.transport).toBe('smtp');
    const mail = await mailTo(sink, 'ops@example.test', /^Acme ID test message$/);
    expect(mail.messageId).toBe(r.messageId);
  });

  it('when no SMTP is configured, then the message goes to the outbox', async () => {
    const r = await runMailTest(outboxApp.app, 'ops@example.test');
    expect(r.transport).toBe('outbox');
    expect(r.messageId).toBeTruthy();
  });

  it('when the address is not an address, then it is refused with 400 and nothing is sent', async () => {
    const before = sink.messages.length;
    await expect(runMailTest(t.app, 'nobody')).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(sink.messages.length).toBe(before);
  });
});

describe('doctor SMTP check', () => {
  it('when the SMTP server answers, then ok', async () => {
    const r = await checkSmtp(config({ SMTP_URL: sink.url }), logger);
    expect(r.status).toBe('ok');
    expect(r.detail).toContain('127.0.0.1');
  });

  it('when no SMTP_URL is set, then warn: outbox in use', async () => {
    const r = await checkSmtp(config({}), logger);
    expect(r).toMatchObject({ status: 'warn' });
    expect(r.detail).toMatch(/^outbox in use/);
  });

  it('when the SMTP server is unreachable, then fail with the reason and no credentials', async () => {
    const r = await checkSmtp(config({ SMTP_URL: `smtp://user:hunter2secret@127.0.0.1:${await closedPort()}` }), logger);
    expect(r.status).toBe('fail');
    expect(r.detail).toContain('127.0.0.1');
    expect(r.detail).not.toContain('hunter2secret');
  });
});
