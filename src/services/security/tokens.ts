import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/** An opaque random token: `<prefix>_<43 base64url chars>` (256 bits). */
export const randomToken = (prefix: string, bytes = 32) => `${prefix}_${randomBytes(bytes).toString('base64url')}`;

/** A numeric one-time code of `digits` digits, uniformly distributed. */
export const randomCode = (digits = 6) => String(randomInt(0, 10 ** digits)).padStart(digits, '0');

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** Constant-time equality of two secrets, whatever their lengths (both are hashed first). */
export function safeEqual(a: string | undefined | null, b: string | undefined | null): boolean {
  if (typeof a !== 'string' || typeof b !== 'string') return false;
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
