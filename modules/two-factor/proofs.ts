import { badRequest, type SessionRecord } from '../../src/module-api.js';
import { checkCode } from './codes.js';
import { activeMethods, ownMethod } from './methods.js';
import type { Caller } from './service.js';
import type { MethodRow } from './store.js';

/** What a change sends to prove the second factor: a current code and the method it came from. */
export interface Proof {
  verification_code?: string;
  verification_method_id?: string;
}

export const proofRequired = (what: string) =>
  badRequest(
    `${what} needs a current code: send verification_code and verification_method_id`,
    [{ field: 'verification_code', message: 'required' }],
    'VERIFICATION_REQUIRED',
  );

/** A current code from one of the user's active methods: what every change needs once 2FA is in use. */
export async function requireProof(c: Caller, proof: Proof, what: string): Promise<MethodRow> {
  if (!proof.verification_code || !proof.verification_method_id) throw proofRequired(what);
  const m = await ownMethod(c.ctx, c.user.id, proof.verification_method_id);
  if (m.status !== 'active') throw badRequest('verification_method_id must be an active method', [{ field: 'verification_method_id', message: 'not active' }]);
  await checkCode(c.ctx, c.user, m, proof.verification_code, 'manage', c.session.id);
  return m;
}

/** How recent a completed second step must be for a method to be added without a code. */
export const RECENT_SECOND_FACTOR_MS = 10 * 60_000;

/**
 * Whether this session completed its second factor within RECENT_SECOND_FACTOR_MS. Only an activated
 * session is two_factor_verified (a trusted device's is not), and it was activated after it was created,
 * so a creation inside the window bounds the activation from below without storing another time.
 */
export const recentSecondFactor = (s: SessionRecord, now = Date.now()): boolean =>
  s.two_factor_verified && now - new Date(s.created_at).getTime() <= RECENT_SECOND_FACTOR_MS;

/**
 * Adding a method while 2FA is on takes proof of the second factor, so a stolen session cannot add the
 * attacker's phone: a code from an existing method, or a sign-in whose second step was just completed
 * (the original client's setup() cannot send a code).
 */
export async function proofToAdd(c: Caller, proof: Proof): Promise<void> {
  const fresh = (await c.ctx.users.find(c.user.id)) ?? c.user;
  if (!fresh.two_factor || !(await activeMethods(c.ctx, c.user.id)).length) return;
  if (proof.verification_code || proof.verification_method_id) {
    await requireProof(c, proof, 'Adding a method while two-factor is on');
    return;
  }
  if (recentSecondFactor(c.session)) return;
  throw badRequest(
    'Adding a method while two-factor is on needs a current code (send verification_code and verification_method_id), ' +
      'or a session that completed its second factor within the last 10 minutes: sign in again and add the method right after',
    [{ field: 'verification_code', message: 'required unless the second factor was completed within the last 10 minutes' }],
    'VERIFICATION_REQUIRED',
  );
}
