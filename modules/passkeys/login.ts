import { generateAuthenticationOptions, verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { ModuleContext, SignInClient, SignInResult } from '../../src/module-api.js';
import { challengeOf, claimChallenge, keepChallenge } from './challenges.js';
import { passkeyInvalid } from './errors.js';
import { relyingParty } from './settings.js';
import { row, store, type CredentialRow } from './store.js';

/**
 * Sign-in options. Every passkey is discoverable (registration requires it), so `allowCredentials` is
 * always empty and an email, when given, is not even looked up: the answer, its shape and its cost are
 * the same for a known, an unknown and no address (no enumeration), and it is what conditional UI
 * (browser autofill) asks for.
 */
export async function loginOptions(ctx: ModuleContext) {
  const options = await generateAuthenticationOptions({ rpID: relyingParty(ctx).id, allowCredentials: [], userVerification: 'preferred' });
  await keepChallenge(ctx, options.challenge, 'login', null);
  return options;
}

type Refusal = 'challenge' | 'unknown_credential' | 'account' | 'verification' | 'counter_regression';

/**
 * Proves the first factor with a passkey and signs in through core's seam (method `passkey`): a
 * two-factor user gets a pending session, as from a password (this slice). Every refusal is
 * PASSKEY_INVALID, written as `passkeys.sign_in_refused` after the answer, with no session opened.
 */
export async function signInWithPasskey(ctx: ModuleContext, credential: AuthenticationResponseJSON, client: SignInClient): Promise<SignInResult> {
  const challenge = challengeOf(credential?.response?.clientDataJSON);
  if (!challenge || !(await claimChallenge(ctx, challenge, 'login', null))) return refuse(ctx, 'challenge', null);
  const { Credential } = store(ctx);
  const found =
    typeof credential.id === 'string' && credential.id.length <= 1400 ? await Credential.findOne({ where: { credential_id: credential.id } }) : null;
  if (!found) return refuse(ctx, 'unknown_credential', null);
  const stored = row(found);
  const user = await ctx.users.find(stored.user_id);
  if (!user || user.disabled_at || user.deleted_at) return refuse(ctx, 'account', stored);
  const rp = relyingParty(ctx);
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
    ctx.logger.info({ passkey: stored.id, reason: (err as Error).message }, 'passkey sign-in refused');
    return refuse(ctx, 'verification', stored);
  }
  if (!v.verified) return refuse(ctx, 'verification', stored);
  const info = v.authenticationInfo;
  // A counter that does not move forward (once either side is past 0) means two authenticators hold
  // the same key: a possible clone.
  if ((info.newCounter > 0 || stored.counter > 0) && info.newCounter <= stored.counter) {
    ctx.logger.warn({ passkey: stored.id, user: stored.user_id }, 'passkey counter went backwards: possible cloned authenticator');
    return refuse(ctx, 'counter_regression', stored);
  }
  // Conditional on the counter read: of two assertions racing with the same counter, one moves it.
  const [moved] = await Credential.update({ counter: info.newCounter, last_used_at: new Date() }, { where: { id: stored.id, counter: stored.counter } });
  if (moved !== 1) return refuse(ctx, 'counter_regression', stored);
  return ctx.signIn(user, 'passkey', client);
}

function refuse(ctx: ModuleContext, reason: Refusal, c: CredentialRow | null): never {
  const details: Record<string, unknown> = { reason, ...(c ? { passkey_id: c.id } : {}) };
  ctx.audit.recordLater({ type: 'passkeys.sign_in_refused', outcome: 'failure', userId: c?.user_id ?? null, details });
  if (reason === 'counter_regression' && c) {
    ctx.audit.recordLater({ type: 'passkeys.clone_suspected', outcome: 'failure', userId: c.user_id, details: { passkey_id: c.id, name: c.name } });
  }
  throw passkeyInvalid();
}
