import { describe, expect, it } from 'vitest';
import { runMailTest } from '../../src/cli/commands/mail-test.js';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { appWithMail } from '../helpers/app-with-mail.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
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

const { t, smtp } = appWithMail();

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

interface Flow {
  name: string;
  /** Asks for the flow's mail for `address`. */
  send(address: string): Promise<{ status: number; body: any }>;
  /** The body field the address travels in. */
  field: string;
  subject: RegExp;
  /** An account the flow mails. */
  account: Partial<UserRecord>;
}

const FLOWS: Flow[] = [
  {
    name: 'resend verification',
    send: (email) => t.request('POST', '/auth/resend-verification', { body: { email } }),
    field: 'email',
    subject: VERIFY_SUBJECT,
    account: { is_verified: false },
  },
  {
    name: 'forgot password',
    send: (email) => t.request('POST', '/auth/password-reset/request', { body: { email } }),
    field: 'email',
    subject: RESET_SUBJECT,
    account: {},
  },
  {
    name: 'token login request',
    send: (identifier) => t.request('POST', '/auth/token/login', { body: { identifier } }),
    field: 'identifier',
    subject: LOGIN_SUBJECT,
    account: {},
  },
];

describe.each(FLOWS)('$name', (flow) => {
  it.each(MALFORMED)(`when the address is %s, then 400 VALIDATION_ERROR names ${flow.field}`, async (_label, address) => {
    expectRefused(await flow.send(address), flow.field);
  });

  it('when a padded, upper-case address is sent, then the mail goes to the stored lower-case address', async () => {
    const user = await makeUser(t, { ...flow.account, email: uniqueEmail('alice') });
    const r = await flow.send(shouted(user.email));
    expect(r.status).toBe(200);
    await mailTo(smtp, user.email, flow.subject);
  });

  it('when a well-formed address has no account, then the answer is the one a registered address gets', async () => {
    const user = await makeUser(t, flow.account);
    const known = await flow.send(user.email);
    const unknown = await flow.send(uniqueEmail('nobody'));
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    // token_id is a fresh id in every answer (an account or not); all else is the same.
    const { token_id: knownId, ...knownRest } = known.body;
    const { token_id: unknownId, ...unknownRest } = unknown.body;
    expect(unknownRest).toEqual(knownRest);
    expect(typeof unknownId).toBe(typeof knownId);
  });
});

it('when token login names type email and the identifier is no address, then 400 (and no phone lookup)', async () => {
  const r = await t.request('POST', '/auth/token/login', { body: { identifier: 'a@b', type: 'email' } });
  expectRefused(r, 'identifier');
  expect(r.body.error).toBe('identifier: must be an email address');
});

describe('gatehouse mail test', () => {
  it.each(MALFORMED)('when --to is %s, then 400 VALIDATION_ERROR names to and nothing is sent', async (_label, to) => {
    const before = smtp.messages.length;
    const err = await runMailTest(t.app, to).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'to' })] });
    expect((err as Error).message).toMatch(/^to: /);
    expect(smtp.messages.length).toBe(before);
  });

  it('when --to is padded and upper-case, then the message goes to the lower-case address, which is reported', async () => {
    const address = uniqueEmail('ops');
    const r = await runMailTest(t.app, shouted(address));
    expect(r.to).toBe(address);
    const mail = await mailTo(smtp, address, /test message$/);
    expect(mail.messageId).toBe(r.messageId);
    expect(mailsTo(smtp, address)).toHaveLength(1);
  });
});
