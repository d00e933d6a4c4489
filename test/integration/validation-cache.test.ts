import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * GET /auth/validation and POST /auth/bridge/validate reuse answers serialised for a cached session
 * and user view. These prove that a reused answer is never stale: a user change or a lastUsedAt
 * update (which the session service makes in place, once a minute) shows on the next request.
 */
let t: TestApp;
let now = Date.now();
beforeAll(async () => {
  t = await startTestApp({ clock: () => new Date(now) });
});
afterAll(async () => t?.close());

const getValidation = (token: string) => t.request<any>('GET', '/auth/validation', { session: token });
const bridge = (token: string) => t.request<any>('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: token } });

describe('reused validation answers', () => {
  it('when a minute passes between validations, then the next answers carry the new lastUsedAt', async () => {
    const { token } = await makeSession(t);
    const first = await getValidation(token);
    const firstBridge = await bridge(token);
    expect((await getValidation(token)).body).toEqual(first.body); // served again from the cache
    expect(firstBridge.body.session.lastUsedAt).toBe(first.body.session.last_used_at);

    now += 2 * 60_000;
    const later = await getValidation(token);
    expect(later.status).toBe(200);
    expect(later.body.session.last_used_at).toBe(new Date(now).toISOString());
    expect(later.body.session.last_used_at).not.toBe(first.body.session.last_used_at);
    expect((await bridge(token)).body.session.lastUsedAt).toBe(new Date(now).toISOString());
  });

  it('when the user changes their profile, then both answers show the change at once', async () => {
    const { token } = await makeSession(t, { name: 'Before' });
    expect((await getValidation(token)).body.user.name).toBe('Before');
    expect((await bridge(token)).body.user.name).toBe('Before');

    const put = await t.request('PUT', '/auth/user/me', { session: token, body: { name: 'After' } });
    expect(put.status).toBe(200);
    expect((await getValidation(token)).body.user.name).toBe('After');
    const b = await bridge(token);
    expect(b.body.user.name).toBe('After');
    expect(b.body.user.userName).toBe(b.body.user.user_name);
  });

  it('when one user has two sessions, then each answer names its own session', async () => {
    const { user, token } = await makeSession(t);
    const other = await t.app.services.sessions.create(user.id, { ip: '127.0.0.2', userAgent: 'second' });
    const a = await bridge(token);
    const b = await bridge(other.token);
    expect(a.body.session.id).not.toBe(b.body.session.id);
    expect(b.body.session).toMatchObject({ id: other.session.id, ipAddress: '127.0.0.2', userAgent: 'second' });
    expect((await getValidation(other.token)).body.session.id).toBe(other.session.id);
  });

  it('when a session is logged out, then neither answer is served from what was cached', async () => {
    const { token } = await makeSession(t);
    expect((await getValidation(token)).status).toBe(200);
    expect((await t.request('POST', '/auth/logout', { session: token })).status).toBe(200);
    expect((await getValidation(token)).status).toBe(401);
    expect((await bridge(token)).status).toBe(401);
  });
});

describe(`a cold validation's read (${BACKEND})`, () => {
  const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

  it('when the session and its user are read in one statement, then they are what the two reads alone give, every column type included', async () => {
    const read = t.app.repos.sessions.findByHashWithUser;
    // PostgreSQL only: on SQLite a read is no round trip, so the two reads stay separate.
    expect(read === undefined).toBe(BACKEND === 'sqlite');
    if (!read) return;
    const { user, token } = await makeSession(t, {
      dob: '1990-02-03',
      metadata: { plan: 'pro', tags: ['a', 'b'], nested: { n: 1 } },
      phone: '+15550100',
      lang: 'fr',
      password_changed_at: new Date('2026-01-02T03:04:05.678Z'),
      first_time: false,
    } as Partial<UserRecord>);
    const hash = hashOf(token);
    const both = await read(hash);
    expect(both).not.toBeNull();
    expect(both!.session).toEqual(await t.app.repos.sessions.findByHash(hash));
    expect(both!.user).toEqual(await t.app.repos.users.findById(user.id));
    expect(both!.session.expires_at).toBeInstanceOf(Date);
    expect(both!.user!.password_changed_at).toBeInstanceOf(Date);

    // A deleted user: the session is found, the user is not (as findById leaves deleted users out).
    await t.app.repos.users.update(user.id, { deleted_at: new Date() });
    const gone = await read(hash);
    expect(gone!.session.id).toBe(both!.session.id);
    expect(gone!.user).toBeNull();
    expect(await read(hashOf('ses_no_such_session'))).toBeNull();
  });

  it('when a fresh instance validates a session it has never seen, then it answers as the warm one, and the next answer is from its memory', async () => {
    const { token } = await makeSession(t, { metadata: { k: 'v' }, dob: '2001-12-31' } as Partial<UserRecord>);
    const warm = await getValidation(token);
    const fresh = await startTestApp({ sharing: t, clock: () => new Date(now) });
    try {
      const cold = await fresh.app.services.sessions.validate(token);
      expect(cold.source === 'db' || cold.source === 'shared').toBe(true);
      const answer = await fresh.request<any>('GET', '/auth/validation', { session: token });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(warm.body);
      expect((await fresh.app.services.sessions.validate(token)).source).toBe('local');
    } finally {
      await fresh.close();
    }
  });
});

describe(`cold validations of one session at once (${BACKEND})`, () => {
  /**
   * Counts the session reads that reach the database; the first one's answer is held until `release`
   * (the read itself is done at once, so it is the row as it was then; `started` says it was). The
   * reads are the real ones.
   */
  function watchReads(opts: { failFirst?: Error } = {}) {
    const repo = t.app.repos.sessions as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const originals = ['findByHash', 'findByHashWithUser'].filter((n) => typeof repo[n] === 'function').map((n) => [n, repo[n]] as const);
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let began!: () => void;
    const started = new Promise<void>((r) => (began = r));
    for (const [name, original] of originals) {
      repo[name] = async (...args: unknown[]) => {
        const first = ++calls === 1;
        const row = await original.apply(repo, args);
        if (first) {
          began();
          await gate;
          if (opts.failFirst) throw opts.failFirst;
        }
        return row;
      };
    }
    return { calls: () => calls, started, release, restore: () => originals.forEach(([name, original]) => (repo[name] = original)) };
  }

  it('when many validations of a session this process has not seen arrive together, then one database read answers them all', async () => {
    const { token } = await makeSession(t);
    const reads = watchReads();
    try {
      const all = Promise.all(Array.from({ length: 20 }, () => t.app.services.sessions.validate(token)));
      reads.release();
      const answers = await all;
      expect(new Set(answers.map((a) => a.session.id)).size).toBe(1);
      expect(answers.every((a) => a.source === 'db')).toBe(true);
      expect(reads.calls()).toBe(1);
      expect((await t.app.services.sessions.validate(token)).source).toBe('local');
    } finally {
      reads.restore();
    }
  });

  it('when the user is disabled while that read is in flight, then a validation that began after the change is refused', async () => {
    const { user, token } = await makeSession(t);
    const reads = watchReads();
    try {
      const first = t.app.services.sessions.validate(token).then(
        () => 'valid',
        (err: { status?: number }) => err.status,
      );
      await reads.started;
      await t.app.repos.users.update(user.id, { disabled_at: new Date() });
      await t.app.services.sessions.invalidateUser(user.id);
      const after = t.app.services.sessions.validate(token).then(
        () => 'valid',
        (err: { status?: number }) => err.status,
      );
      reads.release();
      // The first began before the change and may answer as of its read; the second may not.
      expect(['valid', 401]).toContain(await first);
      expect(await after).toBe(401);
      expect((await getValidation(token)).status).toBe(401);
    } finally {
      reads.restore();
    }
  });

  it('when the session is signed out while that read is in flight, then a validation that began after it is refused', async () => {
    const { token } = await makeSession(t);
    const reads = watchReads();
    try {
      const first = t.app.services.sessions.validate(token).catch((err: { status?: number }) => err.status);
      await reads.started;
      expect(await t.app.services.sessions.revokeToken(token)).toBe(true);
      const after = t.app.services.sessions.validate(token).then(
        () => 'valid',
        (err: { status?: number }) => err.status,
      );
      reads.release();
      await first;
      expect(await after).toBe(401);
    } finally {
      reads.restore();
    }
  });

  it('when that read fails, then every caller waiting on it gets its failure at once, without a read of its own', async () => {
    const { token } = await makeSession(t);
    const gone = new Error('database gone');
    const reads = watchReads({ failFirst: gone });
    try {
      const all = Promise.allSettled(Array.from({ length: 10 }, () => t.app.services.sessions.validate(token)));
      await reads.started;
      reads.release();
      const outcomes = await all;
      expect(outcomes.every((o) => o.status === 'rejected' && o.reason === gone)).toBe(true);
      expect(reads.calls()).toBe(1);
    } finally {
      reads.restore();
    }
    // Nothing of the failure stays behind: the next validation reads again, and is answered.
    expect((await t.app.services.sessions.validate(token)).source).not.toBe('local');
  });
});
