import type { AuditInput } from '../audit/audit-types.js';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { canonicalEmail } from '../data/models/user-columns.js';
import type { SignInMethod } from '../modules/hooks.js';

/**
 * The security events of signing in (src/audit), built in one place so every way in names its method
 * and reasons alike. Details never carry the password, code, token, session id or any part of a
 * session token (the display prefix included: events go out to webhook receivers).
 */

/**
 * The method as the audit record names it: `password`, `token`, `social:<provider>`, or a module's own
 * (`passkey`); a pending session completed by its second factor is `two_factor` (sign-in.ts).
 */
export function auditMethod(method: SignInMethod): string {
  return method === 'token-login' ? 'token' : method;
}

/** A source refused again and again by one login limit is recorded once per minute (audit recordLater oncePer). */
export const THROTTLED_ONCE_PER_MS = 60_000;

/** The user signing in is the actor of their sign-in (the request has no signed-in user yet). */
export const actorOf = (user: Pick<UserRecord, 'id' | 'user_type'>) => ({ id: user.id, user_type: user.user_type });

export function signInSucceeded(user: UserRecord, method: SignInMethod, session: SessionRecord, extra: Record<string, unknown> = {}): AuditInput {
  return {
    type: 'sign_in.succeeded',
    userId: user.id,
    actor: actorOf(user),
    details: { method: auditMethod(method), ...extra },
  };
}

export type SignInFailure =
  | 'wrong_password'
  | 'unknown_account'
  | 'disabled'
  | 'deleted'
  | 'unverified'
  | 'password_expired'
  | 'invalid_token'
  | 'two_factor_failed'
  | 'two_factor_unavailable'
  | 'refused'
  | (string & {});

/**
 * A refused sign-in. An account that exists is named by user_id; the actor is null (nobody proved
 * being that user: the request was anonymous). An unknown account is named by the identifier as
 * lookups compare it (canonical email, or the trimmed lower-cased user name), with user_id null.
 */
export function signInFailed(
  method: SignInMethod,
  reason: SignInFailure,
  who: { user: Pick<UserRecord, 'id' | 'user_type'> } | { identifier: string | null },
  extra: Record<string, unknown> = {},
): AuditInput {
  const base = { type: 'sign_in.failed', outcome: 'failure' as const };
  if ('user' in who) return { ...base, userId: who.user.id, actor: null, details: { method: auditMethod(method), reason, ...extra } };
  const named = who.identifier ? { identifier: normaliseIdentifier(who.identifier) } : {};
  return { ...base, userId: null, actor: null, details: { method: auditMethod(method), reason, ...named, ...extra } };
}

/** Email addresses in their canonical form; anything else (a user name, a phone) trimmed and lower-cased, bounded. */
export function normaliseIdentifier(identifier: string): string {
  const t = identifier.trim();
  return (t.includes('@') ? canonicalEmail(t) : t.toLowerCase()).slice(0, 254);
}
