import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { ModuleContext, SignInClient, SignInOptions, SignInResult, UserRecord } from '../../src/module-api.js';
import { accountBinding, challengeOf, claimChallenge, keepChallenge, type Purpose } from './challenges.js';
import { passkeyAccountMismatch, passkeyInvalid } from './errors.js';
import { relyingParty } from './settings.js';
import { row, store, type CredentialRow } from './store.js';
import { webauthn } from './webauthn.js';

/**
 * Sign-in options. Every passkey is discoverable (registration requires it), so `allowCredentials` is
 * always empty and an email, when given, is not even looked up: the answer, its shape and its cost are
 * the same for a known and an unknown address (no enumeration); without one it is what conditional UI
 * (browser autofill) asks for. A sign-in started for an email is one for that account only: its
 * challenge is bound to the address (challenges.ts `accountBinding`), and a passkey of another account
 * is refused at verify (PASSKEY_ACCOUNT_MISMATCH).
 */
export async function loginOptions(ctx: ModuleContext, email?: string) {
  const { generateAuthenticationOptions } = await webauthn();
  const options = await generateAuthenticationOptions({ rpID: relyingParty(ctx).id, allowCredentials: [], userVerification: 'preferred' });
  if (email) {
    await keepChallenge(ctx, options.challenge, 'login', null, accountBinding(email));
    await keepChallenge(ctx, options.challenge, 'login_account', null);
  } else await keepChallenge(ctx, options.challenge, 'login', null);
  return options;
}

/**
 * Uses up a sign-in challenge: unbound (options without an email), or bound to the address of the
 * passkey's owner. 'mismatch' when it was given for another account's address; 'none' when no such
 * challenge is live.
 */
async function claimLogin(ctx: ModuleContext, challenge: string, owner: () => Promise<UserRecord | null>): Promise<'ok' | 'mismatch' | 'none'> {
  if (await claimChallenge(ctx, challenge, 'login', null)) return 'ok';
  const user = await owner();
  const given = () => claimChallenge(ctx, challenge, 'login_account', null);
  // No owner (an unknown credential, an account gone): the caller refuses it as such, challenge spent.
  if (!user) return (await given()) ? 'ok' : 'none';
  if (await claimChallenge(ctx, challenge, 'login', null, accountBinding(user.email))) {
    await given();
    return 'ok';
  }
  return (await given()) ? 'mismatch' : 'none';
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

/** Runs `fn` once; later calls get its first promise. */
function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

type Refusal = 'challenge' | 'unknown_credential' | 'account' | 'account_mismatch' | 'verification' | 'counter_regression';

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
 * Checks an assertion and moves the passkey's counter, or refuses with PASSKEY_INVALID (or, for a
 * proven passkey of another account than the sign-in was started for, PASSKEY_ACCOUNT_MISMATCH; written as
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
  const { Credential } = store(ctx);
  const where: Record<string, string> = typeof credential?.id === 'string' && credential.id.length <= 1400 ? { credential_id: credential.id } : {};
  if (scope.userId) where.user_id = scope.userId;
  if (scope.passkeyId) where.id = scope.passkeyId;
  const lookUp = once(async () => {
    const m = where.credential_id ? await Credential.findOne({ where }) : null;
    return m ? row(m) : null;
  });
  const ownerOf = once(async () => {
    const c = await lookUp();
    return c ? ctx.users.find(c.user_id) : null;
  });
  if (!challenge) return refuse(ctx, scope, 'challenge', null);
  // A sign-in started for another account's email: refused once the passkey is proven (below), so the
  // answer never tells whose a credential id is to someone who does not hold the passkey.
  let otherAccount = false;
  if (scope.purpose === 'login') {
    const claimed = await claimLogin(ctx, challenge, ownerOf);
    if (claimed === 'none') return refuse(ctx, scope, 'challenge', null);
    otherAccount = claimed === 'mismatch';
  } else if (!(await claimChallenge(ctx, challenge, scope.purpose, scope.userId, scope.bind))) return refuse(ctx, scope, 'challenge', null);
  const stored = await lookUp();
  if (!stored) return refuse(ctx, scope, 'unknown_credential', null);
  const user = await ownerOf();
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
  // Its owner's passkey, proven, answering a sign-in started for someone else: nobody is signed in.
  if (otherAccount) return refuse(ctx, scope, 'account_mismatch', stored);
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
  throw reason === 'account_mismatch' ? passkeyAccountMismatch() : passkeyInvalid();
}
