import os from 'node:os';
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

/**
 * bcrypt runs on libuv's thread pool (4 threads), which SQLite queries and file reads share. A burst
 * of logins queued there would hold every database read behind it, and a stopping process waits for
 * the whole queue before it can exit. So at most this many hashes are handed to the pool at once (as
 * many as there are cores, which is all bcrypt can use); the rest wait here, in JavaScript.
 */
const HASH_CONCURRENCY = Math.max(1, Math.min(os.availableParallelism(), 3));

export function createPasswordHasher(rounds: number): PasswordHasher {
  const slot = concurrency(HASH_CONCURRENCY);
  const compare = (password: string, hash: string) => slot(() => bcrypt.compare(password, hash));
  // A hash of a random value at the same cost, computed once, for unknown users.
  let dummy: Promise<string> | null = null;
  const dummyHash = () => (dummy ??= slot(() => bcrypt.hash(`dummy-${Math.random()}`, rounds)));
  return {
    hash: (password) => slot(() => bcrypt.hash(password, rounds)),
    async verify(password, hash) {
      if (typeof password !== 'string' || Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) {
        await compare('x', await dummyHash());
        return false;
      }
      if (!hash) {
        await compare(password, await dummyHash());
        return false;
      }
      return compare(password, hash);
    },
  };
}

/** Runs at most `n` of the given tasks at a time, the others in arrival order. */
function concurrency(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (active >= n) await new Promise<void>((r) => waiting.push(r));
    active += 1;
    try {
      return await task();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}
