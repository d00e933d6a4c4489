import { describe, expect, it } from 'vitest';
import { appWithMail } from '../helpers/app-with-mail.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';

/*
 * The flows that must not tell whether an address has an account (password reset, verification
 * resend, token login) answer the same body either way. They must also answer in about the same
 * time: a real mail or SMS provider takes hundreds of milliseconds, so a send awaited only for real
 * accounts would give them away. Here the SMTP server and the SMS API answer after DELAY_MS.
 */

const DELAY_MS = 600;
const ROUNDS = 5;

const { t, smtp, sms } = appWithMail({ sms: true, delayMs: DELAY_MS });
/** Messages the providers have accepted, mail and SMS. */
const received = () => smtp.messages.length + sms.messages.length;

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
  const before = received();
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
  await expect.poll(() => received() - before, { timeout: ROUNDS * DELAY_MS * 3 }).toBe(expectSends);
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
