import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cache } from '../../src/cache/cache.js';
import { createSessionService, type SessionService } from '../../src/services/session-service.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/*
 * A copy kept in this process lives a minute. One in use is renewed from the shared cache before it
 * ends, so a session validated thousands of times a second never drops out for all its callers at
 * once. "Instance B" is a second session service on the app's database, Redis and bus, with a clock
 * of its own for its in-process copies.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const MINUTE = 60_000;

async function instanceB(opts: { shared?: Cache } = {}) {
  let now = 1_000_000;
  const b: SessionService = createSessionService({
    sessions: t.app.repos.sessions,
    users: t.app.repos.users,
    shared: opts.shared ?? t.app.cache,
    bus: t.app.bus,
    logger: t.app.logger,
    localClock: () => now,
    ttlSec: t.app.config.sessionTtl,
    pendingTtlSec: t.app.config.pendingSessionTtl,
  });
  await b.subscribe();
  return { b, at: (ms: number) => void (now = 1_000_000 + ms) };
}

/** Validated once on B (read from the database, its copies shared), and the shared copy written. */
async function warm(b: SessionService, token: string) {
  await b.validate(token);
  await new Promise((r) => setTimeout(r, 50)); // the shared copy is written after the caller's turn
  expect(b.peekLocal(token)).not.toBeNull();
}

const settle = () => new Promise((r) => setTimeout(r, 50));

describe('in-process session copies in use are renewed before they end', () => {
  it('when a copy is read in its last seconds, then it is renewed from the shared cache and outlives its minute', async () => {
    const { user, token } = await makeSession(t);
    const { b, at } = await instanceB();
    await warm(b, token);
    at(MINUTE - 5_000);
    expect(b.peekLocal(token)).not.toBeNull(); // read near its end: renewal starts
    await settle();
    at(MINUTE + 30_000);
    expect(b.peekLocal(token)?.session.user_id).toBe(user.id);
  });

  it('when a copy is not read near its end, then it ends after its minute as before', async () => {
    const { token } = await makeSession(t);
    const { b, at } = await instanceB();
    await warm(b, token);
    at(MINUTE + 1);
    expect(b.peekLocal(token)).toBeNull();
  });

  it('when the session is revoked while its renewal reads the shared cache, then the renewal does not bring the copy back', async () => {
    const { token } = await makeSession(t);
    const real = t.app.cache;
    let hold: Promise<void> | null = null;
    let release!: () => void;
    let reached!: () => void;
    const atGate = new Promise<void>((r) => (reached = r));
    const held: Cache = {
      ...real,
      async get(key) {
        const value = await real.get(key);
        if (hold && key.startsWith('s:')) {
          reached();
          await hold;
        }
        return value;
      },
    };
    const { b, at } = await instanceB({ shared: held });
    await warm(b, token);
    hold = new Promise<void>((r) => (release = r));
    at(MINUTE - 5_000);
    expect(b.peekLocal(token)).not.toBeNull(); // renewal starts, and its read of the copy is held
    await atGate;
    await t.app.services.sessions.revokeToken(token); // instance A: row, tombstone, shared copy, bus
    await expect.poll(() => b.peekLocal(token)).toBeNull(); // B's copy evicted by the bus message
    release();
    await settle();
    expect(b.peekLocal(token)).toBeNull();
    await expect(b.validate(token)).rejects.toMatchObject({ status: 401 });
  });

  it('when the user changes, then the renewed user copy is the changed one', async () => {
    const { token } = await makeSession(t, { name: 'Before' });
    const { b, at } = await instanceB();
    await warm(b, token);
    expect((await t.request('PUT', '/auth/user/me', { session: token, body: { name: 'After' } })).status).toBe(200); // on instance A
    await expect.poll(() => b.peekLocal(token)).toBeNull(); // the change evicts the user copy everywhere
    await b.validate(token);
    await settle();
    at(MINUTE - 5_000);
    expect(b.peekLocal(token)?.user.name).toBe('After');
    await settle();
    at(MINUTE + 30_000);
    expect(b.peekLocal(token)?.user.name).toBe('After');
  });
});
