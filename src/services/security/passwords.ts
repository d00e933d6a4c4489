import { createHmac } from 'node:crypto';
import os from 'node:os';
import bcrypt from 'bcrypt';
import { AppError, badRequest, isAppError } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import { isCommonPassword } from './common-passwords.js';

export const PASSWORD_MIN_LENGTH = 8;
/**
 * The longest password accepted, in characters (ASVS 6.2.9 asks for at least 64 of any script). bcrypt
 * reads at most 72 bytes, so a longer one is pre-hashed (`bcryptInput`), never truncated.
 */
export const PASSWORD_MAX_LENGTH = 256;
/** What bcrypt itself reads: a password of more UTF-8 bytes than this goes through the pre-hash. */
export const BCRYPT_MAX_BYTES = 72;
/**
 * The mark on a stored hash whose password was pre-hashed: `gh-sha256$` then bcrypt's own string. A
 * pre-hashed digest is checked only against a marked hash and a plain password only against an
 * unmarked one, so a short password that happened to spell some digest verifies nothing else.
 */
export const PREHASH_MARK = 'gh-sha256$';

/**
 * The documented pre-hash (docs/keys.md): HMAC-SHA-256 keyed with a fixed label, base64, 44 ASCII
 * characters that bcrypt reads whole. A fixed key, not a secret one: the hash must stay verifiable
 * after COOKIE_SECRET changes; the HMAC only separates this use of SHA-256 from any other.
 */
export const prehash = (password: string) => createHmac('sha256', 'gatehouse password prehash v1').update(password, 'utf8').digest('base64');

/** What bcrypt is given for a password, and whether the stored hash carries PREHASH_MARK. */
function bcryptInput(password: string): { input: string; marked: boolean } {
  return Buffer.byteLength(password, 'utf8') > BCRYPT_MAX_BYTES ? { input: prehash(password), marked: true } : { input: password, marked: false };
}

/** Throws a 400 naming the rule a password breaks. */
export function assertPasswordPolicy(password: unknown, field = 'password'): asserts password is string {
  if (typeof password !== 'string' || password.length < PASSWORD_MIN_LENGTH) {
    throw badRequest(
      `Password must be at least ${PASSWORD_MIN_LENGTH} characters`,
      [{ field, message: `at least ${PASSWORD_MIN_LENGTH} characters` }],
      'WEAK_PASSWORD',
    );
  }
  if ([...password].length > PASSWORD_MAX_LENGTH) {
    throw badRequest(
      `Password must be at most ${PASSWORD_MAX_LENGTH} characters`,
      [{ field, message: `at most ${PASSWORD_MAX_LENGTH} characters` }],
      'PASSWORD_TOO_LONG',
    );
  }
  if (isCommonPassword(password)) {
    throw badRequest('Password is too common; choose another', [{ field, message: 'too common' }], 'WEAK_PASSWORD');
  }
}

/** Shorter words are too common to refuse inside a password (NIST SP 800-63B's context words; ASVS 6.2.11). */
const CONTEXT_WORD_MIN = 4;
/** Host labels that name no site in particular. */
const GENERIC_LABELS = new Set(['www', 'auth', 'login', 'accounts', 'account', 'localhost', 'local', 'example']);

/**
 * The words of this deployment a password must not be built on: the product name, and the labels of
 * PUBLIC_URL's host (`auth.acme-corp.io` gives `acme-corp`, not the generic `auth` or the TLD). Lower-case,
 * at least four characters each.
 */
export function siteWords(config: { productName: string; publicBaseUrl: string }): string[] {
  let labels: string[] = [];
  try {
    const host = new URL(config.publicBaseUrl).hostname;
    // An IP address names no site; the last label of a name is its TLD.
    if (!/^[\d.]+$|:/.test(host)) labels = host.split('.').slice(0, -1);
  } catch {
    // A base URL that does not parse names nothing.
  }
  return contextWords([config.productName, ...labels.filter((l) => !GENERIC_LABELS.has(l))]);
}

/** A person's words: the email's local part and its pieces (`ana.ruiz` gives `ana.ruiz` and `ruiz`), the user name. */
export function personalWords(person: { email?: string | null; user_name?: string | null }): string[] {
  const local = person.email?.split('@')[0] ?? '';
  return contextWords([local, ...local.split(/[._+-]/), person.user_name ?? '']);
}

function contextWords(raw: string[]): string[] {
  return [...new Set(raw.map((w) => w.trim().toLowerCase()).filter((w) => [...w].length >= CONTEXT_WORD_MIN))];
}

/**
 * 400 WEAK_PASSWORD when the password is built on a context word: it contains one, and what is left
 * besides it is shorter than the minimum length (`Gatehouse2026!`, `ana.ruiz-1`). A long passphrase that
 * happens to include one is not refused: the rest of it carries the strength.
 */
export function assertNoContextWords(password: string, words: readonly string[], field = 'password'): void {
  const lower = password.toLowerCase();
  for (const w of words) {
    if (lower.includes(w) && [...lower].length - [...w].length < PASSWORD_MIN_LENGTH) {
      throw badRequest(
        'Password is built on the name of this service, its address, or your email or user name; choose another',
        [{ field, message: 'built on a context word' }],
        'WEAK_PASSWORD',
      );
    }
  }
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /**
   * Compares against the hash, or against a dummy hash when there is none, so timing does not tell.
   * With `abandoned`: when it aborts before the comparison has started (the caller went away while it
   * waited for a slot), nothing is compared and it rejects with clientClosed().
   */
  verify(password: string, hash: string | null | undefined, abandoned?: AbortSignal): Promise<boolean>;
}

/**
 * The caller closed the connection before its answer: 499, as proxies log it. Nobody reads the
 * answer; the status is what the access log and the metrics record.
 */
export const clientClosed = () => new AppError(499, Codes.CLIENT_CLOSED_REQUEST, 'The client closed the connection before the answer');

/** Whether `err` is clientClosed()'s error. */
export const isClientClosed = (err: unknown): boolean => isAppError(err) && err.code === Codes.CLIENT_CLOSED_REQUEST;

/**
 * bcrypt runs on libuv's thread pool (4 threads), which SQLite queries and file reads share. A burst
 * of logins queued there would hold every database read behind it, and a stopping process waits for
 * the whole queue before it can exit. So at most this many hashes are handed to the pool at once (as
 * many as there are cores, which is all bcrypt can use); the rest wait here, in JavaScript, where a
 * verification whose caller has gone leaves the queue without costing a hash (under a burst of
 * logins, clients that time out and retry would otherwise have every abandoned attempt hashed).
 */
const HASH_CONCURRENCY = Math.max(1, Math.min(os.availableParallelism(), 3));

export function createPasswordHasher(rounds: number): PasswordHasher {
  const slot = concurrency(HASH_CONCURRENCY);
  const compare = (password: string, hash: string, abandoned?: AbortSignal) => slot(() => bcrypt.compare(password, hash), abandoned);
  // A hash of a random value at the same cost, computed once, for unknown users.
  let dummy: Promise<string> | null = null;
  const dummyHash = () => (dummy ??= slot(() => bcrypt.hash(`dummy-${Math.random()}`, rounds)));
  return {
    async hash(password) {
      const { input, marked } = bcryptInput(password);
      const hashed = await slot(() => bcrypt.hash(input, rounds));
      return marked ? PREHASH_MARK + hashed : hashed;
    },
    async verify(password, hash, abandoned) {
      if (abandoned?.aborted) throw clientClosed();
      // Longer than any accepted password: nothing to compare, but the same cost as a comparison.
      if (typeof password !== 'string' || password.length > PASSWORD_MAX_LENGTH * 2) {
        await compare('x', await dummyHash(), abandoned);
        return false;
      }
      const { input, marked } = bcryptInput(password);
      const stored = hash && hash.startsWith(PREHASH_MARK) === marked ? (marked ? hash.slice(PREHASH_MARK.length) : hash) : null;
      if (!stored) {
        await compare(input, await dummyHash(), abandoned);
        return false;
      }
      return compare(input, stored, abandoned);
    },
  };
}

/**
 * Runs at most `n` of the given tasks at a time, the others in arrival order. A finishing task hands
 * its slot straight to the first waiting one, so a task arriving meanwhile cannot take it as well. A
 * waiting task whose `abandoned` signal aborts leaves the queue at once, rejected with
 * clientClosed(), and never runs.
 */
function concurrency(n: number): <T>(task: () => Promise<T>, abandoned?: AbortSignal) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  const acquire = (abandoned?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (abandoned?.aborted) return reject(clientClosed());
      if (active < n) {
        active += 1;
        return resolve();
      }
      const wake = () => {
        abandoned?.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        waiting.splice(waiting.indexOf(wake), 1);
        reject(clientClosed());
      };
      abandoned?.addEventListener('abort', leave, { once: true });
      waiting.push(wake);
    });
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active -= 1;
  };
  return async (task, abandoned) => {
    await acquire(abandoned);
    try {
      return await task();
    } finally {
      release();
    }
  };
}
