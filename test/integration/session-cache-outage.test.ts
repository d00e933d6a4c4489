import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../src/data/db-health.js';
import type { SessionRepository } from '../../src/data/repositories/session-repository.js';
import type { UserRepository } from '../../src/data/repositories/user-repository.js';
import { sha256 } from '../../src/services/security/tokens.js';
import { createSessionService, type SessionService } from '../../src/services/session-service.js';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/*
 * Sessions during a database outage, at the session cache (the fault tier runs the same through whole
 * servers: test/faults/session-outage-grace.test.ts). "Instance B" is a session service on the app's
 * database, caches and bus whose database can be taken away: its reads then fail as the breaker's do,
 * and the first failing read is when the outage is noticed (as DatabaseHealth does). Its in-process
 * copies and its sessions' expiry run on a clock the test moves.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const MINUTE = 60_000;
const GRACE_SEC = 300;
const settle = () => new Promise((r) => setTimeout(r, 50));

/** Every method of `repo` fails while `isDown()`, and tells `failed` it did. */
function cut<T extends object>(repo: T, isDown: () => boolean, failed: () => void): T {
  return new Proxy(repo, {
    get(target, p, receiver) {
      const v = Reflect.get(target, p, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (!isDown()) return (v as (...a: unknown[]) => unknown).apply(target, args);
        failed();
        return Promise.reject(new DatabaseUnavailableError(new Date()));
      };
    },
  });
}

async function instanceB(opts: { graceSec?: number; shared?: boolean } = {}) {
  const base = Date.now();
  let offset = 0;
  let down = false;
  let since: number | null = null;
  const now = () => base + offset;
  const noticed = () => void (since ??= now());
  const b: SessionService = createSessionService({
    sessions: cut<SessionRepository>(t.app.repos.sessions, () => down, noticed),
    users: cut<UserRepository>(t.app.repos.users, () => down, noticed),
    shared: opts.shared === false || !t.app.redis ? null : t.app.cache,
    bus: t.app.bus,
    logger: t.app.logger,
    localClock: now,
    clock: () => new Date(now()),
    ttlSec: t.app.config.sessionTtl,
    pendingTtlSec: t.app.config.pendingSessionTtl,
    outage: { downSince: () => since, refusal: () => new DatabaseUnavailableError(new Date(since ?? now())) },
    outageGraceSec: opts.graceSec ?? GRACE_SEC,
  });
  await b.subscribe();
  return {
    b,
    at: (ms: number) => void (offset = ms),
    /** The database goes; `noticed`: the breaker knows it at once (else: at the first read that fails). */
    down(noticedNow = true) {
      down = true;
      if (noticedNow) noticed();
    },
    up() {
      down = false;
      since = null;
    },
  };
}

const refused = { code: 'DB_UNAVAILABLE' };

describe(`sessions while the database is down (${BACKEND})`, () => {
  it('when a session was validated before the outage, then it keeps validating from memory past its copies’ minute, until the grace ends, then 503', async () => {
    const { user, token } = await makeSession(t);
    const { b, at, down } = await instanceB();
    await b.validate(token);
    at(30_000);
    down();
    for (const ms of [31_000, MINUTE + 30_000, 3 * MINUTE, 30_000 + GRACE_SEC * 1000 - 1]) {
      at(ms);
      expect(b.peekLocal(token)?.user.id, `${ms} ms`).toBe(user.id); // the fast lane's answer
      expect((await b.validate(token)).user.id, `${ms} ms`).toBe(user.id);
    }
    at(30_000 + GRACE_SEC * 1000);
    expect(b.peekLocal(token)).toBeNull();
    await expect(b.validate(token)).rejects.toMatchObject(refused);
  });

  it('when the outage is noticed only by the read a copy’s end caused, then that copy is held all the same', async () => {
    const { user, token } = await makeSession(t);
    const { b, at, down } = await instanceB({ shared: false });
    await b.validate(token);
    down(false); // nothing has failed yet
    at(MINUTE + 5_000); // both copies ended 5 s ago; this validation's read finds the database down
    expect((await b.validate(token)).user.id).toBe(user.id);
    at(2 * MINUTE);
    expect((await b.validate(token)).user.id).toBe(user.id);
  });

  it('when a session was not validated in the minutes before the outage, then it is not answered from memory (503)', async () => {
    const { token } = await makeSession(t);
    const cold = await makeSession(t);
    const { b, at, down } = await instanceB({ shared: false });
    await b.validate(token);
    at(3 * MINUTE); // its copies ended two minutes ago
    down();
    at(3 * MINUTE + 1_000);
    await expect(b.validate(token)).rejects.toMatchObject(refused);
    await expect(b.validate(cold.token)).rejects.toMatchObject(refused); // never seen here
  });

  it('when a session was revoked before the outage, then it stays refused during it', async () => {
    const { token } = await makeSession(t);
    const { b, at, down } = await instanceB();
    await b.validate(token);
    await t.app.services.sessions.revokeToken(token); // instance A: row, tombstone, shared copy, bus
    await expect.poll(() => b.peekLocal(token)).toBeNull();
    down();
    at(MINUTE + 1);
    await expect(b.validate(token)).rejects.toMatchObject(t.app.redis ? { status: 401 } : refused);
    expect(b.peekLocal(token)).toBeNull();
  });

  it('when the session’s own expiry comes during the outage, then it is refused as expired, within the grace', async () => {
    const { user, token } = await makeSession(t);
    const { b, at, down } = await instanceB();
    // Not validated anywhere yet (no copy in any cache): its row ends in 90 s.
    const session = (await t.app.repos.sessions.findByHash(sha256(token)))!;
    await t.app.repos.sessions.update(session.id, { expires_at: new Date(Date.now() + 90_000) });
    await b.validate(token); // read now, with its near end
    down();
    at(MINUTE + 20_000);
    expect((await b.validate(token)).user.id).toBe(user.id);
    at(100_000);
    expect(b.peekLocal(token)).toBeNull();
    await expect(b.validate(token)).rejects.toMatchObject({ status: 401, code: 'SESSION_EXPIRED' });
  });

  it('when the database returns, then copies held past their minute are read again (changes made meanwhile are seen)', async () => {
    const { user, token } = await makeSession(t, { name: 'Before' });
    const { b, at, down, up } = await instanceB({ shared: false });
    await b.validate(token);
    down();
    // Changed behind B's back (no message reaches it: another process, a restore).
    await t.app.repos.users.update(user.id, { name: 'After' });
    at(2 * MINUTE);
    expect((await b.validate(token)).user.name).toBe('Before');
    up();
    expect(b.peekLocal(token)).toBeNull(); // held no longer
    expect((await b.validate(token)).user.name).toBe('After');
  });

  it.runIf(BACKEND === 'pg')(
    'when another instance never saw the session, then it answers from Redis during the outage (session and user copies shared)',
    async () => {
      const { user, token } = await makeSession(t);
      const { b } = await instanceB();
      await b.validate(token); // read from the database, session and user shared after the answer
      await settle();
      const { b: cold, down } = await instanceB();
      down();
      const v = await cold.validate(token);
      expect([v.source, v.user.id]).toEqual(['shared', user.id]);
      await settle();
      expect(cold.peekLocal(token)?.user.id).toBe(user.id);
    },
  );

  it('when the grace is 0, then nothing is answered from memory during an outage', async () => {
    const { token } = await makeSession(t);
    const { b, down } = await instanceB({ graceSec: 0 });
    await b.validate(token);
    down();
    expect(b.peekLocal(token)).toBeNull();
    await expect(b.validate(token)).rejects.toMatchObject(refused);
  });
});
