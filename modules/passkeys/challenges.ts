import { createHash, randomUUID } from 'node:crypto';
import { Op } from 'sequelize';
import type { ModuleContext } from '../../src/module-api.js';
import { store } from './store.js';
import { webauthnHelpers } from './webauthn.js';

/**
 * What a challenge is for: adding a passkey, signing in (anyone's discoverable credential), the second
 * step of a pending session, or proving a passkey to remove it. All but `login` are bound to their user.
 */
export type Purpose = 'register' | 'login' | 'second_factor' | 'remove' | 'login_account';

/**
 * A sign-in started for an email (options asked with `{email}`): its `login` challenge is bound to the
 * address (`accountBinding`), so only a passkey of that address's account answers it, and a
 * `login_account` marker, unbound, says the challenge was given for some account — so a passkey of
 * another account is told apart from a made-up challenge (login.ts). Neither looks the address up.
 */
export const accountBinding = (email: string) => `account:${email}`;

/** Purposes not bound to a user id (a sign-in's). */
const unbound = (purpose: Purpose) => purpose === 'login' || purpose === 'login_account';

/** Five minutes: long enough for a person at a prompt, short enough that a leaked challenge is stale. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

/**
 * The stored hash. A challenge bound to more than its user (the second step: to its pending session) is
 * hashed with that binding, so it is found only when the same binding is presented: no column needed.
 */
const hash = (challenge: string, bind?: string) =>
  createHash('sha256')
    .update(bind ? `${bind}\n${challenge}` : challenge, 'utf8')
    .digest('hex');

/** Keeps a challenge handed out in options: only its hash, its purpose and (but for `login`) its user. */
export async function keepChallenge(ctx: ModuleContext, challenge: string, purpose: Purpose, userId: string | null, bind?: string): Promise<void> {
  const now = new Date();
  await store(ctx).Challenge.create({
    id: randomUUID(),
    challenge_hash: hash(challenge, bind),
    purpose,
    user_id: userId,
    created_at: now,
    expires_at: new Date(now.getTime() + CHALLENGE_TTL_MS),
    used_at: null,
  });
}

/** The challenge a response was signed over, as its clientDataJSON says; null when that cannot be read. */
export async function challengeOf(clientDataJSON: unknown): Promise<string | null> {
  if (typeof clientDataJSON !== 'string' || clientDataJSON.length > 10_000) return null;
  const { decodeClientDataJSON } = await webauthnHelpers();
  try {
    const c = decodeClientDataJSON(clientDataJSON).challenge;
    return typeof c === 'string' && c.length <= 200 ? c : null;
  } catch {
    return null;
  }
}

/**
 * Uses up a challenge: one conditional update, so of two requests with the same challenge one wins.
 * True only for a live challenge of this purpose (and, but for `login`, this user's) never used
 * before. It is spent whatever the verification then says: a challenge is good for one attempt.
 */
export async function claimChallenge(ctx: ModuleContext, challenge: string, purpose: Purpose, userId: string | null, bind?: string): Promise<boolean> {
  const now = new Date();
  const [count] = await store(ctx).Challenge.update(
    { used_at: now },
    {
      where: {
        challenge_hash: hash(challenge, bind),
        purpose,
        used_at: null,
        expires_at: { [Op.gt]: now },
        ...(unbound(purpose) ? {} : { user_id: userId }),
      },
    },
  );
  return count === 1;
}

/** Deletes challenges past their lifetime (spent or not): the module's cleanup job. */
export async function sweepChallenges(ctx: ModuleContext): Promise<string> {
  const n = await store(ctx).Challenge.destroy({ where: { expires_at: { [Op.lt]: new Date() } } });
  return `${n} expired passkey challenges deleted`;
}
