import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/*
 * The flows that must not tell whether an address has an account (password reset, verification
 * resend, token login) answer the same body either way. They must also answer in about the same
 * time: a real mail or SMS provider takes hundreds of milliseconds, so a send awaited only for real
 * accounts would give them away. Here the SMTP server and the SMS API answer after DELAY_MS.
 */

const DELAY_MS = 600;
const ROUNDS = 5;

const received: string[] = [];
let smtp: SMTPServer;
let smtpUrl = '';
let smsApi: http.Server;
let smsUrl = '';
let t: TestApp;

beforeAll(async () => {
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    onData(stream, _session, cb) {
      simpleParser(stream).then(
        (mail) => setTimeout(() => (received.push(String(mail.to && 'text' in mail.to ? mail.to.text : '')), cb()), DELAY_MS),
        (err: Error) => cb(err),
      );
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;

  smsApi = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        received.push(`sms:${req.url}`);
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ sid: 'SM0', status: 'queued' }));
      }, DELAY_MS),
    );
  });
  await new Promise<void>((resolve) => smsApi.listen(0, '127.0.0.1', resolve));
  smsUrl = `http://127.0.0.1:${(smsApi.address() as AddressInfo).port}`;

  t = await startTestApp({
    env: {
      SMTP_URL: smtpUrl,
      SMS_PROVIDER: 'twilio',
      SMS_API_URL: smsUrl,
      SMS_ACCOUNT_SID: 'ACtest0001',
      SMS_AUTH_TOKEN: 'sms-auth-token',
      SMS_FROM: '+15550000000',
    },
  });
});

afterAll(async () => {
  await t?.close();
  await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  await new Promise<void>((resolve) => smsApi?.close(() => resolve()));
});

async function timed(method: string, path: string, body: unknown): Promise<{ ms: number; status: number; body: unknown }> {
  const start = performance.now();
  const r = await t.request(method, path, { body });
  return { ms: performance.now() - start, status: r.status, body: r.body };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Asks ROUNDS times for a known and an unknown address, alternately. The answers must be equal
 * (token_id, a random id either way, aside) and neither may wait for the provider.
 */
async function compare(path: string, known: () => unknown, unknown: () => unknown, expectSends: number) {
  const before = received.length;
  const k: number[] = [];
  const u: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const a = await timed('POST', path, known());
    const b = await timed('POST', path, unknown());
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    const strip = (x: unknown) => ({ ...(x as Record<string, unknown>), token_id: typeof (x as { token_id?: unknown }).token_id });
    expect(strip(a.body)).toEqual(strip(b.body));
    k.push(a.ms);
    u.push(b.ms);
  }
  expect(median(k), `known ${k.map(Math.round)} vs unknown ${u.map(Math.round)}`).toBeLessThan(median(u) + DELAY_MS / 2);
  // The messages for the real account do go out, after the answer.
  const until = Date.now() + ROUNDS * DELAY_MS * 3;
  while (received.length - before < expectSends && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  expect(received.length - before).toBe(expectSends);
}

describe('no account enumeration through timing', () => {
  it('when a password reset is asked for a known and an unknown address, then both answer alike and neither waits for SMTP', async () => {
    const user = await makeUser(t, { email: uniqueEmail('enum-reset') });
    await compare(
      '/auth/password-reset/request',
      () => ({ email: user.email }),
      () => ({ email: uniqueEmail('nobody') }),
      ROUNDS,
    );
  }, 30_000);

  it('when a verification resend is asked for an unverified and an unknown address, then both answer alike and neither waits for SMTP', async () => {
    const user = await makeUser(t, { email: uniqueEmail('enum-verify'), is_verified: false });
    await compare(
      '/auth/resend-verification',
      () => ({ email: user.email }),
      () => ({ email: uniqueEmail('nobody') }),
      ROUNDS,
    );
  }, 30_000);

  it('when a login link is asked for a known and an unknown address, then both answer alike and neither waits for SMTP', async () => {
    const user = await makeUser(t, { email: uniqueEmail('enum-link') });
    await compare(
      '/auth/token/login',
      () => ({ identifier: user.email }),
      () => ({ identifier: uniqueEmail('nobody') }),
      ROUNDS,
    );
  }, 30_000);

  it('when a login code is texted to a known and an unknown phone, then both answer alike and neither waits for the SMS API', async () => {
    const phone = `+1555${String(Date.now() % 1_000_000).padStart(6, '0')}7`;
    await makeUser(t, { phone });
    let n = 0;
    const stranger = () => `+1666${String((Date.now() + ++n) % 1_000_000).padStart(6, '0')}3`;
    await compare(
      '/auth/token/login',
      () => ({ identifier: phone, type: 'sms' }),
      () => ({ identifier: stranger(), type: 'sms' }),
      ROUNDS,
    );
  }, 30_000);
});
