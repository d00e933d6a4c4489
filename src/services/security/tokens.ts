import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/** An opaque random token: `<prefix>_<43 base64url chars>` (256 bits). */
export const randomToken = (prefix: string, bytes = 32) => `${prefix}_${randomBytes(bytes).toString('base64url')}`;

/** A numeric one-time code of `digits` digits, uniformly distributed. */
export const randomCode = (digits = 6) => String(randomInt(0, 10 ** digits)).padStart(digits, '0');

export const sha256 = (value: string) => hash('sha256', value, 'hex');
const digest = (value: string) => hash('sha256', value, 'buffer');

/** Constant-time equality of two secrets, whatever their lengths (both are hashed first). */
export function safeEqual(a: string | undefined | null, b: string | undefined | null): boolean {
  if (typeof a !== 'string' || typeof b !== 'string') return false;
  return timingSafeEqual(digest(a), digest(b)) && a.length === b.length;
}

/** safeEqual against one fixed secret, whose digest is computed once (the bridge secret, per request). */
export function secretMatcher(secret: string): (given: string | undefined | null) => boolean {
  const expected = digest(secret);
  return (given) => typeof given === 'string' && timingSafeEqual(digest(given), expected) && given.length === secret.length;
}
