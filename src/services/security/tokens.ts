import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/** An opaque random token: `<prefix>_<43 base64url chars>` (256 bits). */
export const randomToken = (prefix: string, bytes = 32) => `${prefix}_${randomBytes(bytes).toString('base64url')}`;

/** A numeric one-time code of `digits` digits, uniformly distributed. */
export const randomCode = (digits = 6) => String(randomInt(0, 10 ** digits)).padStart(digits, '0');

export const sha256 = (value: string) => hash('sha256', value, 'hex');
const digest = (value: string) => hash('sha256', value, 'buffer');

/**
 * Constant-time comparison with one fixed secret, whatever the lengths (both sides are hashed); the
 * secret's digest is computed once, for a secret checked on every request (the bridge secret).
 */
export function secretMatcher(secret: string): (given: unknown) => boolean {
  const expected = digest(secret);
  return (given) => typeof given === 'string' && timingSafeEqual(digest(given), expected) && given.length === secret.length;
}

/** Constant-time equality of two secrets, whatever their lengths. */
export function safeEqual(a: string | undefined | null, b: string | undefined | null): boolean {
  return typeof b === 'string' && secretMatcher(b)(a);
}
