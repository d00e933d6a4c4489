import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionRepository } from '../../src/data/repositories/session-repository.js';
import type { UserRepository } from '../../src/data/repositories/user-repository.js';
import { createSessionService, type SessionService } from '../../src/services/session-service.js';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/*
 * A revocation must win over a validation that read the row just before it. "Instance B" is a second
 * session service on the same database, shared cache and bus as the app ("instance A"); its
 * repository reads the real rows but holds one answer back until the revocation is done, which is
 * the interleaving two busy instances produce by chance.
 */

let t: TestApp;
/** A second real instance on PostgreSQL + Redis; the embedded default is single-instance, so the same app there. */
let other: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  other = BACKEND === 'pg' ? await startTestApp({ sharing: t }) : t;
});
afterAll(async () => {
  if (other && other !== t) await other.close();
  await t?.close();
});

interface Gate {
  /** Resolves once the held-back read has its row. */
  reached: Promise<void>;
  hold(): Promise<void>;
  open(): void;
}

function gate(): Gate {
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const released = new Promise<void>((r) => (release = r));
  let armed = true;
  return {
    reached,
    async hold() {
      if (!armed) return;
      armed = false;
      reach();
      await released;
    },
    open: () => release(),
  };
}

async function instanceB(opts: { sessions?: Partial<SessionRepository>; users?: Partial<UserRepository>; clock?: () => Date }): Promise<SessionService> {
  const b = createSessionService({
    sessions: { ...t.app.repos.sessions, ...opts.sessions },
    users: { ...t.app.repos.users, ...opts.users },
    shared: t.app.redis ? t.app.cache : null,
    bus: t.app.bus,
    logger: t.app.logger,
    clock: opts.clock,
    ttlSec: t.app.config.sessionTtl,
    pendingTtlSec: t.app.config.pendingSessionTtl,
  });
  await b.subscribe();
  return b;
}

/**
 * A session repository whose first read waits at the gate (after reading the row), by either read a
 * validation may use: the session alone, or (PostgreSQL) the session with its user in one statement.
 */
const sessionsHeldAt = (g: Gate): Partial<SessionRepository> => {
  const real = t.app.repos.sessions;
  const withUser = real.findByHashWithUser;
  return {
    async findByHash(hash) {
      const row = await real.findByHash(hash);
      await g.hold();
      return row;
    },
    ...(withUser && {
      async findByHashWithUser(hash: string) {
        const read = await withUser(hash);
        await g.hold();
        return read;
      },
    }),
  };
};

/**
 * Repositories whose first read of this user waits at the gate (after reading the row): the user read
 * alone, or read with a session in one statement (PostgreSQL).
 */
const usersHeldAt = (userId: string, g: Gate): { users: Partial<UserRepository>; sessions: Partial<SessionRepository> } => {
  const withUser = t.app.repos.sessions.findByHashWithUser;
  return {
    users: {
      async findById(id, o) {
        const row = await t.app.repos.users.findById(id, o);
        if (id === userId) await g.hold();
        return row;
      },
    },
    sessions: withUser
      ? {
          async findByHashWithUser(hash: string) {
            const read = await withUser(hash);
            if (read?.user?.id === userId) await g.hold();
            return read;
          },
        }
      : {},
  };
};

/**
 * A fixed wait, not a poll: the in-flight work (cache writes, the lastUsedAt write, bus messages)
 * lands, and then nothing may have brought the session back; polling until it is refused would let
 * a stale copy that is evicted only later pass.
 */
const settle = () => new Promise((r) => setTimeout(r, 100));
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'valid',
    (e: { code?: string }) => e.code ?? 'error',
  );

describe(`session cache coherence (${BACKEND})`, () => {
  it('when a session is revoked while another instance is reading its row, then neither instance accepts it afterwards', async () => {
    const { token } = await makeSession(t);
    const g = gate();
    const b = await instanceB({ sessions: sessionsHeldAt(g) });
    const inflight = outcome(b.validate(token));
    await g.reached;
    expect(await t.app.services.sessions.revokeToken(token)).toBe(true);
    g.open();
    await inflight;
    await settle();

    expect(await outcome(b.validate(token))).toBe('INVALID_SESSION');
    expect(await outcome(t.app.services.sessions.validate(token))).toBe('INVALID_SESSION');
    expect((await t.request('GET', '/auth/validation', { session: token })).status).toBe(401);
  });

  it('when a session is revoked while a validation is finishing, then its lastUsedAt write does not bring it back', async () => {
    const { user, token } = await makeSession(t);
    const g = gate();
    // Two minutes ahead, so this validation records the use (the write that re-caches the session).
    const b = await instanceB({
      clock: () => new Date(Date.now() + 120_000),
      ...usersHeldAt(user.id, g),
    });
    const inflight = outcome(b.validate(token));
    await g.reached;
    expect(await t.app.services.sessions.revokeAllForUser(user.id)).toBe(1);
    g.open();
    await inflight;
    await settle();

    expect(await outcome(b.validate(token))).toBe('INVALID_SESSION');
    expect(await outcome(t.app.services.sessions.validate(token))).toBe('INVALID_SESSION');
  });

  it('when a user is disabled while another instance is reading the user, then that instance does not keep the old copy', async () => {
    const { user, token } = await makeSession(t);
    const g = gate();
    const b = await instanceB(usersHeldAt(user.id, g));
    const inflight = outcome(b.validate(token));
    await g.reached;
    await t.app.repos.users.update(user.id, { disabled_at: new Date() });
    await t.app.services.sessions.invalidateUser(user.id);
    g.open();
    await inflight;
    await settle();

    expect(await outcome(b.validate(token))).toBe('INVALID_SESSION');
    expect(await outcome(t.app.services.sessions.validate(token))).toBe('INVALID_SESSION');
  });

  it('when another session is revoked while this one is being read, then this one is still cached (evictions are per session)', async () => {
    const mine = await makeSession(t);
    const theirs = await makeSession(t);
    const g = gate();
    const b = await instanceB({ sessions: sessionsHeldAt(g) });
    const inflight = b.validate(mine.token);
    await g.reached;
    await t.app.services.sessions.revokeToken(theirs.token);
    g.open();
    expect((await inflight).source).toBe('db');
    await settle();
    expect((await b.validate(mine.token)).source).toBe('local');
  });

  it('when an admin disables or deletes a user on one instance, then the other refuses the sessions it had cached at once', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    for (const action of ['disable', 'delete'] as const) {
      const { user, token } = await makeSession(t);
      const bridge = () => other.request('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: token } });
      expect((await bridge()).status).toBe(200);
      expect((await bridge()).body.cached).toBe(true);
      const r =
        action === 'disable'
          ? await t.request('PUT', `/auth/admin/users/${user.id}`, { session: admin.token, body: { disabled: true } })
          : await t.request('DELETE', `/auth/admin/users/${user.id}`, { session: admin.token });
      expect(r.status).toBe(200);
      await settle();
      expect((await bridge()).status, action).toBe(401);
      expect((await other.request('GET', '/auth/me', { session: token })).status, action).toBe(401);
    }
  });

  it('when a session is validated, then the cached user carries no password hash, in memory or in the shared cache', async () => {
    const { user, token } = await makeSession(t);
    expect(user.password_hash).toMatch(/^\$2/);
    const b = await instanceB({});
    const first = await b.validate(token);
    const again = await b.validate(token);
    expect([first.source, again.source]).toEqual(['db', 'local']);
    for (const v of [first, again]) expect(v.user.password_hash ?? null).toBeNull();
    if (t.app.redis) {
      // b read the user with the session (PostgreSQL: one statement), which shares no user copy; another
      // instance finds the session in the shared cache (b writes it just after its answer), reads the
      // user alone and shares that copy.
      await settle();
      const c = await instanceB({});
      const third = await c.validate(token);
      expect(third.source).toBe('shared');
      expect(third.user.password_hash ?? null).toBeNull();
      const shared = await t.app.cache.get(`u:${user.id}`);
      expect(shared).toContain(user.id);
      expect(shared).not.toContain(user.password_hash!);
    }
  });
});
