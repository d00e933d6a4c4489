import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { simpleParser } from 'mailparser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { AppError } from '../../src/errors/app-error.js';
import { createLogger } from '../../src/log/logger.js';
import { createMailer, type Mailer } from '../../src/mail/mailer.js';
import { createSmsSender } from '../../src/mail/sms.js';
import { startSmsSink, type SmsSink } from '../helpers/sms-sink.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const LINK = 'https://app.acme.test/reset?token=tok-abc&lang=es';

let dataDir: string;
let logLines: string[];
const cleanups: (() => Promise<unknown>)[] = [];

function logger() {
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  });
  return createLogger('info', sink);
}

function config(env: Record<string, string> = {}) {
  return loadConfig({ env: { GATEHOUSE_DATA_DIR: dataDir, PRODUCT_NAME: 'Acme ID', MAIL_FROM: 'Acme <no-reply@acme.test>', ...env }, skipFile: true });
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function rejection(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-mail-'));
  logLines = [];
});

afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
  await rm(dataDir, { recursive: true, force: true });
});

describe('mail over SMTP', () => {
  let sink: SmtpSink;
  let mailer: Mailer;

  beforeEach(async () => {
    sink = await startSmtpSink();
    cleanups.push(() => sink.close());
    mailer = createMailer(config({ SMTP_URL: sink.url }), logger());
    cleanups.push(() => mailer.close());
  });

  it('when a message is sent, then the SMTP server receives it rendered in the user language', async () => {
    const sent = await mailer.send({ to: 'ana@example.com', template: 'password-reset', lang: 'es', data: { name: 'Ana', link: LINK, expiresMinutes: 60 } });
    expect(sent.transport).toBe('smtp');

    const mail = await sink.waitFor((m) => m.messageId === sent.messageId);
    expect(mail.subject).toBe('Restablece tu contraseña de Acme ID');
    expect(mail.from?.value[0].address).toBe('no-reply@acme.test');
    const to = Array.isArray(mail.to) ? mail.to[0] : mail.to;
    expect(to?.value[0].address).toBe('ana@example.com');
    expect(mail.text).toContain(LINK);
    expect(mail.html).toContain(`href="${LINK.replace('&', '&amp;')}"`);
    expect(mail.headers.get('auto-submitted')).toBe('auto-generated');
  });

  it('when the SMTP server is up, then verify() resolves', async () => {
    await expect(mailer.verify()).resolves.toBeUndefined();
  });
});

describe('mail with an unreachable SMTP server', () => {
  it('when verify() runs against a closed port, then it throws 503 MAIL_DELIVERY_FAILED naming the server', async () => {
    const port = await closedPort();
    const mailer = createMailer(config({ SMTP_URL: `smtp://user:s3cret-pass@127.0.0.1:${port}` }), logger());
    const err = await rejection(mailer.verify());
    expect(err.status).toBe(503);
    expect(err.code).toBe('MAIL_DELIVERY_FAILED');
    expect(err.message).toContain(`127.0.0.1:${port}`);
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(err.message).not.toContain('s3cret-pass');
  });

  it('when a send fails, then it throws 503 MAIL_DELIVERY_FAILED and logs no credentials', async () => {
    const port = await closedPort();
    const mailer = createMailer(config({ SMTP_URL: `smtp://user:s3cret-pass@127.0.0.1:${port}` }), logger());
    const err = await rejection(mailer.send({ to: 'ana@example.com', template: 'test', data: {} }));
    expect(err.status).toBe(503);
    expect(err.code).toBe('MAIL_DELIVERY_FAILED');
    expect(logLines.join('')).toContain('mail delivery failed');
    expect(logLines.join('')).not.toContain('s3cret-pass');
  });
});

describe('mail without SMTP (outbox)', () => {
  it('when a message is sent, then an .eml file lands in <data dir>/outbox', async () => {
    const mailer = createMailer(config(), logger());
    const sent = await mailer.send({ to: 'ana@example.com', template: 'verify-email', lang: 'en', data: { name: 'Ana', link: LINK } });
    expect(sent.transport).toBe('outbox');

    const files = (await readdir(path.join(dataDir, 'outbox'))).filter((f) => f.endsWith('.eml'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/verify-email\.eml$/);
    const mail = await simpleParser(await readFile(path.join(dataDir, 'outbox', files[0])));
    expect(mail.messageId).toBe(sent.messageId);
    expect(mail.subject).toBe('Verify your email for Acme ID');
    expect(mail.text).toContain(LINK);
    expect(mail.html).toContain('Verify email');
  });

  it('when a message is written, then the log names its kind and file but never the link, token, body or code', async () => {
    const mailer = createMailer(config(), logger());
    await mailer.send({ to: 'ana@example.com', template: 'login-link', data: { link: LINK, code: '482913', expiresMinutes: 15 } });
    const line = JSON.parse(logLines.find((l) => l.includes('mail written to outbox'))!);
    expect(line.level).toBe(30);
    expect(line.template).toBe('login-link');
    expect(line.file).toMatch(/login-link\.eml$/);
    expect(line.to).toBe('a***@example.com');
    const all = logLines.join('');
    expect(all).not.toContain(LINK);
    expect(all).not.toContain(new URL(LINK).searchParams.get('token'));
    expect(all).not.toContain('482913');
    expect(all).not.toContain('If you did not try to sign in');
    expect(all).not.toContain('ana@example.com');
  });

  it('when the outbox can be created, then verify() resolves', async () => {
    await expect(createMailer(config(), logger()).verify()).resolves.toBeUndefined();
    expect(await readdir(path.join(dataDir, 'outbox'))).toEqual([]);
  });

  it('when the data dir is not a directory, then verify() throws 503 MAIL_DELIVERY_FAILED', async () => {
    const file = path.join(dataDir, 'not-a-dir');
    await writeFile(file, 'x');
    const mailer = createMailer(loadConfig({ env: { GATEHOUSE_DATA_DIR: file }, skipFile: true }), logger());
    const err = await rejection(mailer.verify());
    expect(err.status).toBe(503);
    expect(err.code).toBe('MAIL_DELIVERY_FAILED');
  });
});

describe('SMS through the Twilio-compatible provider', () => {
  const smsEnv = (url: string) => ({
    SMS_PROVIDER: 'twilio',
    SMS_API_URL: url,
    SMS_ACCOUNT_SID: 'AC0123',
    SMS_AUTH_TOKEN: 'tok-s3cret',
    SMS_FROM: '+15550001111',
  });

  async function sinkWith(opts?: { failWith?: number }): Promise<SmsSink> {
    const sink = await startSmsSink(opts);
    cleanups.push(() => sink.close());
    return sink;
  }

  it('when a text is sent, then the provider receives the form fields with basic auth', async () => {
    const sink = await sinkWith();
    const sms = createSmsSender(config(smsEnv(sink.url)), logger());
    const sent = await sms.send('+34600111222', 'Your Acme ID code is 482913');
    expect(sent.transport).toBe('twilio');

    const got = await sink.waitFor((m) => m.sid === sent.id);
    expect(got).toMatchObject({
      to: '+34600111222',
      from: '+15550001111',
      body: 'Your Acme ID code is 482913',
      auth: 'AC0123:tok-s3cret',
      accountSid: 'AC0123',
    });
    const all = logLines.join('');
    expect(all).toContain('+34******222');
    expect(all).not.toContain('+34600111222');
    expect(all).not.toContain('tok-s3cret');
  });

  it('when the provider answers with an error, then send throws 503 SMS_DELIVERY_FAILED', async () => {
    const sink = await sinkWith({ failWith: 400 });
    const sms = createSmsSender(config(smsEnv(sink.url)), logger());
    const err = await rejection(sms.send('+34600111222', 'hello'));
    expect(err.status).toBe(503);
    expect(err.code).toBe('SMS_DELIVERY_FAILED');
    expect(sink.attempts()).toBe(1);
    expect(sink.messages).toHaveLength(0);
    expect(logLines.join('')).toContain('"providerCode":21211');
  });

  it('when the provider fails with a 5xx, then send throws 503 SMS_DELIVERY_FAILED', async () => {
    const sink = await sinkWith({ failWith: 500 });
    const err = await rejection(createSmsSender(config(smsEnv(sink.url)), logger()).send('+34600111222', 'hello'));
    expect(err.code).toBe('SMS_DELIVERY_FAILED');
  });

  it('when the provider is unreachable, then send throws 503 SMS_DELIVERY_FAILED', async () => {
    const port = await closedPort();
    const err = await rejection(createSmsSender(config(smsEnv(`http://127.0.0.1:${port}`)), logger()).send('+34600111222', 'hello'));
    expect(err.status).toBe(503);
    expect(err.code).toBe('SMS_DELIVERY_FAILED');
  });

  it('when the provider credentials are not configured, then send throws 503 naming the missing keys', async () => {
    const err = await rejection(createSmsSender(config({ SMS_PROVIDER: 'twilio' }), logger()).send('+34600111222', 'hello'));
    expect(err.status).toBe(503);
    expect(err.code).toBe('SMS_DELIVERY_FAILED');
    expect(err.message).toContain('SMS_ACCOUNT_SID');
  });
});

describe('SMS without a provider (outbox)', () => {
  it('when a text is sent, then an sms-*.txt file holds it and the log masks the number', async () => {
    const sms = createSmsSender(config(), logger());
    const sent = await sms.send('+34600111222', 'Your Acme ID code is 482913');
    expect(sent.transport).toBe('outbox');

    const files = (await readdir(path.join(dataDir, 'outbox'))).filter((f) => /^sms-.*\.txt$/.test(f));
    expect(files).toHaveLength(1);
    const content = await readFile(path.join(dataDir, 'outbox', files[0]), 'utf8');
    expect(content).toContain('To: +34600111222');
    expect(content).toContain('Your Acme ID code is 482913');
    const all = logLines.join('');
    expect(all).toContain('sms written to outbox');
    expect(all).toContain('+34******222');
    expect(all).not.toContain('+34600111222');
    expect(all).not.toContain('482913');
  });
});
