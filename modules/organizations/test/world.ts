import { afterAll, beforeAll, expect } from 'vitest';
import { makeSession, makeUser, uniqueEmail } from '../../../test/helpers/factories.js';
import { startTestApp, type TestApp, type TestResponse } from '../../../test/helpers/test-app.js';
import type { UserRecord } from '../../../src/module-api.js';
import type { ParsedMail, SmtpSink } from '../../../test/helpers/smtp-sink.js';
import { newId } from '../ids.js';

export { makeSession, makeUser, uniqueEmail };
export const O = '/auth/organizations';

/** One app for the file's tests with the module installed through the hub. */
export function useApp(env: Record<string, string> = {}): () => TestApp {
  let t: TestApp | undefined;
  beforeAll(async () => {
    t = await startTestApp({ env });
    await t.app.modules.hub.install(['organizations']);
  });
  afterAll(async () => t?.close());
  return () => {
    if (!t) throw new Error('the app is not started yet');
    return t;
  };
}

export interface Person {
  user: UserRecord;
  token: string;
}

export const person = (t: TestApp, values: Partial<UserRecord> = {}): Promise<Person> => makeSession(t, { email: uniqueEmail('org'), ...values });

let n = 0;
/** An organization made through the API by `owner`; returns it. */
export async function makeOrg(t: TestApp, owner: Person, body: Record<string, unknown> = {}) {
  const r = await t.request('POST', O, { session: owner.token, body: { name: `Acme ${++n}`, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data.organization as { id: string; slug: string; name: string };
}

/** Puts `who` into the organization with `role` straight in the table (test set-up; the API path is invitations). */
export async function addMember(t: TestApp, orgId: string, who: Person, role: string) {
  const now = new Date();
  await t.app.sequelize.query('INSERT INTO organization_members (id, organization_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', {
    replacements: [newId(), orgId, who.user.id, role, now, now],
  });
}

export function refused(r: TestResponse, status: number, code: string) {
  expect([r.status, r.body?.code], JSON.stringify(r.body)).toEqual([status, code]);
  expect(r.body.success).toBe(false);
}

export async function eventsOf(t: TestApp, type: string, orgId: string) {
  const all = (await t.app.services.audit.list({ types: [type], limit: 200 })).events;
  return all.filter((e) => (e.details as Record<string, unknown> | null)?.organization_id === orgId);
}

/** The invitation token of a mail's link. */
export const tokenIn = (m: ParsedMail) => /\/invitations\/(orginv_[A-Za-z0-9_-]+)/.exec(m.text ?? '')?.[1] ?? '';

/** `owner` invites `email` through the API; the invitation, and the token and mail the sink received. */
export async function inviteMailOf(t: TestApp, smtp: SmtpSink, owner: Person, orgId: string, email: string, role = 'member') {
  const r = await t.request('POST', `${O}/${orgId}/invitations`, { session: owner.token, body: { email, role } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const mail = await smtp.waitFor((m) => m.to !== undefined && JSON.stringify(m.to).includes(email));
  return { invitation: r.body.data.invitation, token: tokenIn(mail), mail };
}
