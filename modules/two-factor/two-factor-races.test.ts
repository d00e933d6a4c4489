import { describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { makeSession, nextMail, proofCode, TF, uniqueEmail, useWorld, userWithEmail2fa } from './test/helpers.js';

const world = useWorld();

const ROUNDS = 10;
// Ten rounds of real mail round trips: longer than one request-sized test on a busy machine.
const SLOW = { timeout: 120_000 };
const req = (method: string, path: string, session: string, body?: unknown) => world().t.request(method, path, { session, body });

interface MethodView {
  id: string;
  method: string;
  status: string;
}

/** What the user has once everything settled: 2FA on or off, and their methods. */
async function state(token: string): Promise<{ on: boolean; methods: MethodView[] }> {
  const r = await req('GET', `${TF}/methods`, token);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { on: r.body.two_factor_enabled as boolean, methods: r.body.methods as MethodView[] };
}
const confirmedPrimaries = (methods: MethodView[]) => methods.filter((m) => m.status === 'active' && m.method !== 'backup_codes');

/** A user with 2FA on and two confirmed email methods: their own address and a second one. */
async function userWithTwoMethods() {
  const { user, token, methodId: first } = await userWithEmail2fa(world());
  const other = uniqueEmail('second');
  const proof = await proofCode(world(), token, user.email, first);
  const { r, code } = await nextMail(world(), other, () => req('POST', `${TF}/email/setup`, token, { identifier: other, ...proof }));
  const confirmed = await req('POST', `${TF}/verify`, token, { method_id: r.body.method_id, code, action: 'setup' });
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  return { user, token, first, second: r.body.method_id as string, other };
}

describe(`two-factor changes that race (${BACKEND})`, () => {
  it('when the last two methods are removed at once, then one removal wins and 2FA is never left on without a method', SLOW, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { user, token, first, second, other } = await userWithTwoMethods();
      const proofFirst = await proofCode(world(), token, user.email, first);
      const proofSecond = await proofCode(world(), token, other, second);
      const answers = await Promise.all([req('DELETE', `${TF}/${first}`, token, proofFirst), req('DELETE', `${TF}/${second}`, token, proofSecond)]);
      const after = await state(token);
      expect(after.on, `round ${round}`).toBe(true);
      expect(confirmedPrimaries(after.methods), `round ${round}: ${JSON.stringify(answers.map((a) => a.body))}`).toHaveLength(1);
      expect(answers.map((a) => a.status).sort(), `round ${round}`).toEqual([200, 400]);
      expect(answers.find((a) => a.status === 400)!.body.code).toMatch(/^(LAST_METHOD|METHOD_NOT_FOUND)$/);
    }
  });

  it('when 2FA is turned on while its only method is removed, then 2FA on always has a confirmed method', SLOW, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { user, token } = await makeSession(world().t, { email: uniqueEmail('toggle-race') });
      const { r, code } = await nextMail(world(), user.email, () => req('POST', `${TF}/email/setup`, token, {}));
      expect((await req('POST', `${TF}/verify`, token, { method_id: r.body.method_id, code, action: 'setup' })).status).toBe(200);
      // Confirming the first method turned 2FA on: turned off again (with a code), the method stays.
      const proof = await proofCode(world(), token, user.email, r.body.method_id);
      expect((await req('POST', `${TF}/toggle`, token, { two_factor_enabled: false, ...proof })).body.two_factor_enabled).toBe(false);
      const answers = await Promise.all([
        req('POST', `${TF}/toggle`, token, { two_factor_enabled: true }),
        req('DELETE', `${TF}/${r.body.method_id}`, token, {}),
      ]);
      const after = await state(token);
      expect(after.on, `round ${round}: ${JSON.stringify(answers.map((a) => a.body))}`).toBe(confirmedPrimaries(after.methods).length > 0);
    }
  });

  it('when the same method is set up twice at once, then one setup wins: one set of backup codes, one pending authenticator', SLOW, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { token } = await makeSession(world().t, { email: uniqueEmail('setup-race') });
      const codes = await Promise.all([req('POST', `${TF}/backup_codes/setup`, token, {}), req('POST', `${TF}/backup_codes/setup`, token, {})]);
      expect(codes.map((a) => a.status).sort(), `round ${round}`).toEqual([200, 400]);
      expect(codes.find((a) => a.status === 400)!.body.code).toBe('ALREADY_SET_UP');
      await Promise.all([req('POST', `${TF}/totp/setup`, token, {}), req('POST', `${TF}/totp/setup`, token, {})]);
      const { on, methods } = await state(token);
      expect(on).toBe(false);
      expect(methods.map((m) => `${m.method}:${m.status}`).sort(), `round ${round}`).toEqual(['backup_codes:active', 'totp:pending_setup']);
    }
  });
});
