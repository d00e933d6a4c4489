import os from 'node:os';
import bcrypt from 'bcrypt';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/app-error.js';
import { assertNoContextWords, createPasswordHasher, personalWords, PREHASH_MARK, prehash, siteWords } from '../../src/services/security/passwords.js';

/** As many verifications as the hasher runs at once (passwords.ts); the next one waits for a slot. */
const SLOTS = Math.max(1, Math.min(os.availableParallelism(), 3));
const PASSWORD = 'Correct-Horse-51';
/** A cost at which a verification takes tens of milliseconds, long enough to queue behind. */
const ROUNDS = 10;

let hash: string;
beforeAll(async () => {
  hash = await bcrypt.hash(PASSWORD, ROUNDS);
});

/** Records the order in which promises settle, each under its label. */
function settleOrder() {
  const order: string[] = [];
  const track = <T>(label: string, p: Promise<T>) =>
    p.then(
      (v) => {
        order.push(label);
        return v;
      },
      (err: unknown) => {
        order.push(label);
        throw err;
      },
    );
  return { order, track };
}

describe('password hasher: a caller who has gone', () => {
  it('when a verification waiting for a slot is abandoned, then it leaves the queue at once with 499 and the ones behind it still run', async () => {
    const hasher = createPasswordHasher(ROUNDS);
    const { order, track } = settleOrder();
    const running = Array.from({ length: SLOTS }, (_, i) => track(`running-${i}`, hasher.verify(PASSWORD, hash)));
    const gone = new AbortController();
    const abandoned = track('abandoned', hasher.verify(PASSWORD, hash, gone.signal));
    const behind = track('behind', hasher.verify('Wrong-Password-9', hash, new AbortController().signal));
    gone.abort();

    const err = await abandoned.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 499, code: 'CLIENT_CLOSED_REQUEST' });
    expect(order).toEqual(['abandoned']); // before any hash ended: it was never handed to bcrypt
    expect(await Promise.all(running)).toEqual(Array(SLOTS).fill(true));
    expect(await behind).toBe(false);
    // It waited for a slot: it settled after one of the running ones, whose end handed it the slot. Not
    // necessarily after all of them: on a loaded host a running hash may take longer than the one that
    // followed it (failed once in .ci/run's quick tier as 'behind' before 'running-0').
    const firstRunningDone = Math.min(...Array.from({ length: SLOTS }, (_, i) => order.indexOf(`running-${i}`)));
    expect(order.indexOf('behind')).toBeGreaterThan(firstRunningDone);
  });

  it('when the caller is gone before the verification is asked for, then nothing is compared, even with slots free', async () => {
    const slow = 12; // a comparison takes a few hundred ms: far longer than two refusals, even on a loaded machine
    const hasher = createPasswordHasher(slow);
    const slowHash = await bcrypt.hash(PASSWORD, slow);
    const gone = new AbortController();
    gone.abort();
    const started = performance.now();
    await expect(hasher.verify(PASSWORD, slowHash, gone.signal)).rejects.toMatchObject({ status: 499 });
    await expect(hasher.verify(PASSWORD, null, gone.signal)).rejects.toMatchObject({ status: 499 }); // unknown user: no dummy hash either
    const refused = performance.now() - started;
    const compared = performance.now();
    expect(await hasher.verify(PASSWORD, slowHash)).toBe(true); // and the hasher's slots are all still there
    expect(refused).toBeLessThan((performance.now() - compared) / 2);
  });

  it('when the caller goes away once the comparison has started, then it runs to the end and answers', async () => {
    const hasher = createPasswordHasher(ROUNDS);
    const gone = new AbortController();
    const verifying = hasher.verify(PASSWORD, hash, gone.signal);
    await new Promise((r) => setTimeout(r, 5));
    gone.abort();
    expect(await verifying).toBe(true);
  });

  it('when many verifications are queued and some are abandoned, then the others all answer and every slot comes back', async () => {
    const hasher = createPasswordHasher(ROUNDS);
    const controllers = Array.from({ length: 4 * SLOTS }, () => new AbortController());
    const all = controllers.map((c) => hasher.verify(PASSWORD, hash, c.signal).catch((e: unknown) => e));
    // Every other waiting one goes away (the first SLOTS hold the slots and are not waiting).
    const leaving = controllers.filter((_, i) => i >= SLOTS && i % 2 === 0);
    for (const c of leaving) c.abort();
    const results = await Promise.all(all);
    expect(results.filter((r) => r instanceof AppError)).toHaveLength(leaving.length);
    expect(results.filter((r) => r === true)).toHaveLength(results.length - leaving.length);
    // A slot lost to an abandoned waiter would leave one of these waiting for ever.
    expect(await Promise.all(Array.from({ length: SLOTS + 1 }, () => hasher.verify(PASSWORD, hash)))).toEqual(Array(SLOTS + 1).fill(true));
  });
});

describe('password hasher: passwords longer than bcrypt reads (ASVS 6.2.9)', () => {
  const hasher = createPasswordHasher(4);

  it('when a password is over 72 bytes (64 × é, 256 characters), then it is pre-hashed, marked, and verifies; one character less does not', async () => {
    for (const password of ['é'.repeat(64), `${'x'.repeat(255)}!`, 'a'.repeat(73)]) {
      const stored = await hasher.hash(password);
      expect(stored.startsWith(PREHASH_MARK)).toBe(true);
      expect(await hasher.verify(password, stored)).toBe(true);
      expect(await hasher.verify(password.slice(0, -1), stored)).toBe(false);
      // Two passwords that agree on their first 72 bytes are different passwords (bcrypt alone would truncate).
      expect(await hasher.verify(password.slice(0, -1) + 'Z', stored)).toBe(false);
    }
  });

  it('when a password fits in 72 bytes, then it is hashed as before, and hashes made before still verify', async () => {
    const stored = await hasher.hash(PASSWORD);
    expect(stored).toMatch(/^\$2[aby]\$04\$/);
    expect(await hasher.verify(PASSWORD, stored)).toBe(true);
    expect(await hasher.verify(PASSWORD, hash)).toBe(true);
  });

  it('when the pre-hashed digest of a long password is given as a password, then it does not verify against the long one, nor the long one against a plain hash of its digest', async () => {
    const long = 'é'.repeat(64);
    const stored = await hasher.hash(long);
    expect(await hasher.verify(prehash(long), stored)).toBe(false);
    expect(await hasher.verify(long, await hasher.hash(prehash(long)))).toBe(false);
  });
});

describe('password policy: context words (NIST SP 800-63B, ASVS 6.1.2, 6.2.11)', () => {
  const site = siteWords({ productName: 'Gatehouse', publicBaseUrl: 'https://auth.acme-corp.io' });
  const person = personalWords({ email: 'ana.ruiz@acme-corp.io', user_name: 'anaruiz' });

  it('gathers the product name, the host’s own labels (not auth or the TLD), the email’s local part and its pieces, the user name', () => {
    expect(site).toEqual(['gatehouse', 'acme-corp']);
    expect(person).toEqual(['ana.ruiz', 'ruiz', 'anaruiz']);
    expect(siteWords({ productName: 'App', publicBaseUrl: 'http://127.0.0.1:8787' })).toEqual([]);
  });

  it.each(['Gatehouse2026!', 'ACME-CORP-2026', 'ana.ruiz-1', 'Ruiz12345', 'anaruiz!!'])('refuses %s, built on a context word', (password) => {
    expect(() => assertNoContextWords(password, [...site, ...person])).toThrow(expect.objectContaining({ status: 400, code: 'WEAK_PASSWORD' }));
  });

  it.each(['Correct-Horse-42', 'my gatehouse has a red door and a bell', 'ruixlike-words-2'])('accepts %s', (password) => {
    expect(() => assertNoContextWords(password, [...site, ...person])).not.toThrow();
  });
});
