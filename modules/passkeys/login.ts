import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { ModuleContext, SignInClient, SignInOptions, SignInResult, UserRecord } from '../../src/module-api.js';
import { challengeOf, claimChallenge, keepChallenge, type Purpose } from './challenges.js';
import { passkeyInvalid } from './errors.js';
import { relyingParty } from './settings.js';
import { row, store, type CredentialRow } from './store.js';
import { webauthn } from './webauthn.js';

/**
 * Sign-in options. Every passkey is discoverable (registration requires it), so `allowCredentials` is
 * always empty and an email, when given, is not even looked up: the answer, its shape and its cost are
 * the same for a known, an unknown and no address (no enumeration), and it is what conditional UI
 * (browser autofill) asks for.
 */
export async function loginOptions(ctx: ModuleContext) {
  const { generateAuthenticationOptions } = await webauthn();
  const options = await generateAuthenticationOptions({ rpID: relyingParty(ctx).id, allowCredentials: [], userVerification: 'preferred' });
  await keepChallenge(ctx, options.challenge, 'login', null);
  return options;
}

/**
 * Options limited to some of one user's passkeys (all of them for the second step of a sign-in, one for
 * proving a removal), their challenge bound to that user and purpose.
 */
export async function userOptions(
  ctx: ModuleContext,
  userId: string,
  purpose: 'second_factor' | 'remove',
  opts: { only?: CredentialRow[]; bind?: string } = {},
) {
  const { only, bind } = opts;
  const rows = only ?? (await store(ctx).Credential.findAll({ where: { user_id: userId }, order: [['created_at', 'ASC']] })).map(row);
  const { generateAuthenticationOptions } = await webauthn();
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(ctx).id,
    allowCredentials: rows.map((c) => ({ id: c.credential_id, transports: c.transports ? (c.transports.split(',') as never[]) : undefined })),
    userVerification: 'preferred',
  });
  await keepChallenge(ctx, options.challenge, purpose, userId, bind);
  return options;
}

type Refusal = 'challenge' | 'unknown_credential' | 'account' | 'verification' | 'counter_regression';

/** Where an assertion is checked: which challenge it must answer and, but for a sign-in, whose passkey it must be. */
export interface AssertionScope {
  purpose: Purpose;
  /** The user the challenge was given to (and whose passkey it must be); null for a sign-in. */
  userId: string | null;
  /** One passkey (its row id) the assertion must come from: a removal. */
  passkeyId?: string;
  /** What else the challenge was bound to (the pending session of a second step). */
  bind?: string;
  client: SignInClient;
}

/**
 * Checks an assertion and moves the passkey's counter, or refuses with PASSKEY_INVALID (written as
 * `passkeys.sign_in_refused` after the answer, with the step in `details.purpose`). Once the passkey's
 * user is known, the check takes one attempt of core's per-account failed-sign-in budget (the password
 * login's backoff, `ctx.signInAttempts`): a failed one counts as a failed password.
 */
export async function checkAssertion(
  ctx: ModuleContext,
  credential: AuthenticationResponseJSON,
  scope: AssertionScope,
): Promise<{ stored: CredentialRow; user: UserRecord; uv: boolean }> {
  const challenge = await challengeOf(credential?.response?.clientDataJSON);
  if (!challenge || !(await claimChallenge(ctx, challenge, scope.purpose, scope.userId, scope.bind))) return refuse(ctx, scope, 'challenge', null);
  const { Credential } = store(ctx);
  const where: Record<string, string> = typeof credential.id === 'string' && credential.id.length <= 1400 ? { credential_id: credential.id } : {};
  if (scope.userId) where.user_id = scope.userId;
  if (scope.passkeyId) where.id = scope.passkeyId;
  const found = where.credential_id ? await Credential.findOne({ where }) : null;
  if (!found) return refuse(ctx, scope, 'unknown_credential', null);
  const stored = row(found);
  const user = await ctx.users.find(stored.user_id);
  if (!user || user.disabled_at || user.deleted_at) return refuse(ctx, scope, 'account', stored);
  const attempt = await ctx.signInAttempts.reserve(user, scope.client);
  const failed = async (reason: Refusal): Promise<never> => {
    await attempt.failed();
    return refuse(ctx, scope, reason, stored);
  };
  const rp = relyingParty(ctx);
  const { verifyAuthenticationResponse } = await webauthn();
  let v;
  try {
    v = await verifyAuthenticationResponse({
      response: credential,
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      // The counter is compared below, where a regression can be told apart and recorded.
      credential: { id: stored.credential_id, publicKey: Buffer.from(stored.public_key, 'base64url'), counter: 0 },
      requireUserVerification: false,
    });
  } catch (err) {
    ctx.logger.info({ passkey: stored.id, reason: (err as Error).message }, 'passkey assertion refused');
    return failed('verification');
  }
  if (!v.verified) return failed('verification');
  const info = v.authenticationInfo;
  // A counter that does not move forward (once either side is past 0) means two authenticators hold
  // the same key: a possible clone.
  if ((info.newCounter > 0 || stored.counter > 0) && info.newCounter <= stored.counter) {
    ctx.logger.warn({ passkey: stored.id, user: stored.user_id }, 'passkey counter went backwards: possible cloned authenticator');
    return failed('counter_regression');
  }
  // Conditional on the counter read: of two assertions racing with the same counter, one moves it.
  const [moved] = await Credential.update({ counter: info.newCounter, last_used_at: new Date() }, { where: { id: stored.id, counter: stored.counter } });
  if (moved !== 1) return failed('counter_regression');
  await attempt.succeeded();
  return { stored, user, uv: info.userVerified };
}

/**
 * What the sign-in proved, for core's seam. With user verification (a PIN or biometric on the
 * authenticator) a passkey is two factors, possession and verification: `factors: 2` (the manifest
 * declares `provesTwoFactors`), so a two-factor user needs no second step. `amr` (RFC 8176): `hwk` for
 * a key bound to one device, `swk` for a synced one, `user` and `mfa` with verification.
 */
export function proofOf(stored: CredentialRow, uv: boolean): SignInOptions {
  const key = stored.device_type === 'multiDevice' ? 'swk' : 'hwk';
  return uv ? { factors: 2, amr: [key, 'user', 'mfa'], details: { uv: true } } : { factors: 1, amr: [key], details: { uv: false } };
}

/**
 * Proves the first factor (or, with user verification, both) with a passkey and signs in through core's
 * seam (method `passkey`): a two-factor user gets a full session from a user-verified assertion and a
 * pending one, as from a password, without. Every refusal is PASSKEY_INVALID, with no session opened.
 */
export async function signInWithPasskey(ctx: ModuleContext, credential: AuthenticationResponseJSON, client: SignInClient): Promise<SignInResult> {
  const { stored, user, uv } = await checkAssertion(ctx, credential, { purpose: 'login', userId: null, client });
  return ctx.signIn(user, 'passkey', client, proofOf(stored, uv));
}

function refuse(ctx: ModuleContext, scope: AssertionScope, reason: Refusal, c: CredentialRow | null): never {
  const details: Record<string, unknown> = { reason, ...(scope.purpose === 'login' ? {} : { purpose: scope.purpose }), ...(c ? { passkey_id: c.id } : {}) };
  ctx.audit.recordLater({ type: 'passkeys.sign_in_refused', outcome: 'failure', userId: c?.user_id ?? scope.userId, details });
  if (reason === 'counter_regression' && c) {
    ctx.audit.recordLater({ type: 'passkeys.clone_suspected', outcome: 'failure', userId: c.user_id, details: { passkey_id: c.id, name: c.name } });
  }
  throw passkeyInvalid();
}
