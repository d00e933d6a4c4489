import { afterAll, beforeAll, expect } from 'vitest';
import { makeSession, makeUser, uniqueEmail } from '../../../test/helpers/factories.js';
import { startTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import type { UserRecord } from '../../../src/module-api.js';
import { assert, createCredential, type Ceremony, type SoftCredential } from './authenticator.js';

export { makeSession, makeUser, uniqueEmail };
export const P = '/auth/passkeys';
export const ORIGIN = 'https://localhost:8443';
export const RP_ID = 'localhost';

/** One app for the file's tests, the module installed through the hub, the relying party set in the environment. */
export function useApp(): () => TestApp {
  let t: TestApp | undefined;
  beforeAll(async () => {
    t = await startTestApp({ env: { WEBAUTHN_RP_ID: RP_ID, WEBAUTHN_ORIGINS: ORIGIN, RATE_LIMIT_PASSKEYS: '100000/1m' } });
    await t.app.modules.hub.install(['passkeys']);
  });
  afterAll(async () => t?.close());
  return () => {
    if (!t) throw new Error('the app is not started yet');
    return t;
  };
}

/** Adds a passkey through the API with a full session; returns the authenticator's credential and the answer. */
export async function addPasskey(t: TestApp, token: string, c: Partial<Ceremony> & { name?: string } = {}) {
  const o = await t.request('POST', `${P}/register/options`, { session: token, body: {} });
  expect(o.status, JSON.stringify(o.body)).toBe(200);
  const { credential, response } = createCredential(o.body.options, { origin: ORIGIN, ...c });
  const r = await t.request('POST', `${P}/register/verify`, { session: token, body: { credential: response, name: c.name } });
  return { credential, r, options: o.body.options };
}

/** Signs in with a passkey (discoverable: options asked for with no email). */
export async function signInWith(t: TestApp, credential: SoftCredential, c: Partial<Ceremony> = {}) {
  const o = await t.request('POST', `${P}/login/options`, { body: {} });
  expect(o.status, JSON.stringify(o.body)).toBe(200);
  const assertion = assert(credential, o.body.options, { origin: ORIGIN, ...c });
  return { r: await t.request('POST', `${P}/login/verify`, { body: { credential: assertion } }), assertion, options: o.body.options };
}

/** A user with a session and one passkey. */
export async function userWithPasskey(t: TestApp, values: Partial<UserRecord> = {}) {
  const { user, token } = await makeSession(t, { email: uniqueEmail('pk'), ...values });
  const { credential, r } = await addPasskey(t, token);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { user, token, credential, passkey: r.body.passkey as { id: string; name: string } };
}

/** Rows of one of the module's tables for a user (read as an operator would, straight from the database). */
export async function rowsOf(t: TestApp, table: 'passkey_credentials' | 'sessions', userId: string): Promise<Record<string, unknown>[]> {
  const [rows] = await t.app.sequelize.query(`SELECT * FROM ${table} WHERE user_id = ?`, { replacements: [userId] });
  return rows as Record<string, unknown>[];
}
