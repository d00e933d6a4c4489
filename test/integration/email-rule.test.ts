import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMailTest } from '../../src/cli/commands/mail-test.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { mailTo, mailsTo } from './flows-helpers.js';

/**
 * One email rule (src/services/user-fields.ts `emailField`: trimmed, lower-cased, at most 254
 * characters, a real address) for the public mail flows and `gatehouse mail test`. The addresses
 * below passed the looser rule these places used before (/^[^\s@]+@[^\s@]+$/, no length limit in
 * mail test); each is now a 400 VALIDATION_ERROR, while any well-formed address gets the same answer
 * whether or not it has an account.
 */
const LONG = `${'a'.repeat(243)}@example.test`; // 256 characters
const MALFORMED: [label: string, address: string][] = [
  ...['a@b', 'x"y"@example.test', 'ana..diaz@example.test', 'ana@example.test.', 'ana@exa_mple.test', '<ana@example.test>'].map((a): [string, string] => [
    a,
    a,
  ]),
  ['a 256-character address', LONG],
];

const VERIFY_SUBJECT = /^Verify your email for Gatehouse$/;
const RESET_SUBJECT = /^Reset your Gatehouse password$/;
const LOGIN_SUBJECT = /^Your Gatehouse sign-in link$/;

let sink: SmtpSink;
let t: TestApp;

beforeAll(async () => {
  sink = await startSmtpSink();
  t = await startTestApp({ env: { SMTP_URL: sink.url } });
});

afterAll(async () => {
  await t?.close();
  await sink?.close();
});

/** `  Alice.x@Example.TEST ` for alice.x@example.test: padded and upper-cased, the same address. */
const shouted = (email: string) => {
  const [local, domain] = email.split('@');
  return `  ${local[0].toUpperCase()}${local.slice(1)}@${domain.toUpperCase()} `;
};

function expectRefused(r: { status: number; body: any }, field: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
  expect(r.body.error).toMatch(new RegExp(`^${field}: `));
  expect(r.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
}

const resend = (email: string) => t.request('POST', '/auth/resend-verification', { body: { email } });
const forgot = (email: string) => t.request('POST', '/auth/password-reset/request', { body: { email } });
const tokenLogin = (identifier: string, type?: string) => t.request('POST', '/auth/token/login', { body: { identifier, ...(type ? { type } : {}) } });

describe('resend verification', () => {
  it.each(MALFORMED)('when the address is %s, then 400 VALIDATION_ERROR names email', async (_label, email) => {
    expectRefused(await resend(email), 'email');
  });

  it('when a padded, upper-case address is sent, then the mail goes to the stored lower-case address', async () => {
    const user = await makeUser(t, { email: uniqueEmail('alice'), is_verified: false });
    const r = await resend(shouted(user.email));
    expect(r.status).toBe(200);
    const mail = await mailTo(sink, user.email, VERIFY_SUBJECT);
    expect(mail.subject).toMatch(VERIFY_SUBJECT);
  });

  it('when a well-formed address has no account, then the answer is the one a registered address gets', async () => {
    const user = await makeUser(t, { email: uniqueEmail('known'), is_verified: false });
    const known = await resend(user.email);
    const unknown = await resend(uniqueEmail('nobody'));
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual(known.body);
  });
});

describe('forgot password', () => {
  it.each(MALFORMED)('when the address is %s, then 400 VALIDATION_ERROR names email', async (_label, email) => {
    expectRefused(await forgot(email), 'email');
  });

  it('when a padded, upper-case address is sent, then the reset mail goes to the stored address', async () => {
    const user = await makeUser(t, { email: uniqueEmail('bob') });
    const r = await forgot(shouted(user.email));
    expect(r.status).toBe(200);
    await mailTo(sink, user.email, RESET_SUBJECT);
  });

  it('when a well-formed address has no account, then the answer is the one a registered address gets', async () => {
    const user = await makeUser(t);
    const known = await forgot(user.email);
    const unknown = await forgot(uniqueEmail('nobody'));
    expect(known.status).toBe(200);
    expect(unknown.body).toEqual(known.body);
  });
});

describe('token login request', () => {
  it.each(MALFORMED)('when the address is %s, then 400 VALIDATION_ERROR names identifier', async (_label, identifier) => {
    expectRefused(await tokenLogin(identifier), 'identifier');
  });

  it('when type is email and the identifier is no address, then 400 (and not a phone lookup)', async () => {
    const r = await tokenLogin('a@b', 'email');
    expectRefused(r, 'identifier');
    expect(r.body.error).toBe('identifier: must be an email address');
  });

  it('when a padded, upper-case address is sent, then the sign-in link goes to the stored address', async () => {
    const user = await makeUser(t, { email: uniqueEmail('carol') });
    const r = await tokenLogin(shouted(user.email));
    expect(r.status).toBe(200);
    await mailTo(sink, user.email, LOGIN_SUBJECT);
  });

  it('when a well-formed address has no account, then the answer has the same shape and message', async () => {
    const user = await makeUser(t);
    const known = await tokenLogin(user.email);
    const unknown = await tokenLogin(uniqueEmail('nobody'));
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(Object.keys(unknown.body).sort()).toEqual(Object.keys(known.body).sort());
    expect(unknown.body.message).toBe(known.body.message);
  });
});

describe('gatehouse mail test', () => {
  it.each(MALFORMED)('when --to is %s, then 400 VALIDATION_ERROR names to and nothing is sent', async (_label, to) => {
    const before = sink.messages.length;
    const err = await runMailTest(t.app, to).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'to' })] });
    expect((err as Error).message).toMatch(/^to: /);
    expect(sink.messages.length).toBe(before);
  });

  it('when --to is padded and upper-case, then the message goes to the lower-case address, which is reported', async () => {
    const address = uniqueEmail('ops');
    const r = await runMailTest(t.app, shouted(address));
    expect(r.to).toBe(address);
    const mail = await mailTo(sink, address, /test message$/);
    expect(mail.messageId).toBe(r.messageId);
    expect(mailsTo(sink, address)).toHaveLength(1);
  });
});
