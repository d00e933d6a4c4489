import bcrypt from 'bcrypt';
import { badRequest } from '../../errors/app-error.js';
import { isCommonPassword } from './common-passwords.js';

export const PASSWORD_MIN_LENGTH = 8;
/** bcrypt reads at most 72 bytes; longer input is refused rather than silently truncated. */
export const PASSWORD_MAX_BYTES = 72;

/** Throws a 400 naming the rule a password breaks. */
export function assertPasswordPolicy(password: unknown, field = 'password'): asserts password is string {
  if (typeof password !== 'string' || password.length < PASSWORD_MIN_LENGTH) {
    throw badRequest(
      `Password must be at least ${PASSWORD_MIN_LENGTH} characters`,
      [{ field, message: `at least ${PASSWORD_MIN_LENGTH} characters` }],
      'WEAK_PASSWORD',
    );
  }
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) {
    throw badRequest(`Password must be at most ${PASSWORD_MAX_BYTES} bytes`, [{ field, message: `at most ${PASSWORD_MAX_BYTES} bytes` }], 'PASSWORD_TOO_LONG');
  }
  if (isCommonPassword(password)) {
    throw badRequest('Password is too common; choose another', [{ field, message: 'too common' }], 'WEAK_PASSWORD');
  }
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Compares against the hash, or against a dummy hash when there is none, so timing does not tell. */
  verify(password: string, hash: string | null | undefined): Promise<boolean>;
}

export function createPasswordHasher(rounds: number): PasswordHasher {
  // A hash of a random value at the same cost, computed once, for unknown users.
  let dummy: Promise<string> | null = null;
  const dummyHash = () => (dummy ??= bcrypt.hash(`dummy-${Math.random()}`, rounds));
  return {
    hash: (password) => bcrypt.hash(password, rounds),
    async verify(password, hash) {
      if (typeof password !== 'string' || Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) {
        await bcrypt.compare('x', await dummyHash());
        return false;
      }
      if (!hash) {
        await bcrypt.compare(password, await dummyHash());
        return false;
      }
      return bcrypt.compare(password, hash);
    },
  };
}
