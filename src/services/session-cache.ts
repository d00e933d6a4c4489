import { randomUUID } from 'node:crypto';
import type { Bus, Cache } from '../cache/cache.js';
import { Lru } from '../cache/lru.js';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import { SECRET_USER_COLUMNS, USER_DATE_COLUMNS } from '../data/models/user-columns.js';
import type { UserRecord } from '../data/repositories/user-repository.js';

const LOCAL_TTL_MS = 60_000;
/**
 * A copy in use with less than this left is renewed from the shared cache in the background. Left to
 * expire, a copy read thousands of times a second went at once for every caller: each then took the
 * slow path (the app, a shared-cache read) until one refill landed, and the process fell behind for
 * some 20 ms (the p99 at equal load in `npm run bench`, once a minute).
 */
const RENEW_WITHIN_MS = 10_000;
const SHARED_TTL_SEC = 300;
/** Longer than any read can be in flight. */
const EVICTED_TTL_MS = 5 * 60_000;
/**
 * How long before a database outage was noticed an in-process copy may have ended and still be held
 * through it. An outage is noticed by the first call that fails; on a quiet instance that call may be
 * the very read a copy's end caused (its wait and the probe take a few seconds), so a copy that ended
 * shortly before counts as known valid. It was read from the database at most two minutes before.
 */
const HELD_AFTER_END_MS = LOCAL_TTL_MS;
/** During an outage, a copy held past its end asks the shared cache for a newer one at most this often. */
const OUTAGE_RENEW_EVERY_MS = 5_000;

export const CHANNEL_SESSION_REVOKED = 'session:revoked';
export const CHANNEL_USER_CHANGED = 'user:changed';

export type CacheSource = 'local' | 'shared' | 'db';

/** A session found: where, and (read with it from the database) its user. */
export interface SessionLookup {
  s: SessionRecord;
  source: CacheSource;
  user?: UserRecord | null;
}

export interface SessionCacheDeps {
  findSession(hash: string): Promise<SessionRecord | null>;
  findUser(id: string): Promise<UserRecord | null>;
  /** The session with this hash and its live user, in one read (where the database has it: PostgreSQL). */
  findSessionWithUser?(hash: string): Promise<{ session: SessionRecord; user: UserRecord | null } | null>;
  /** Shared cache (Redis) when configured; null keeps only the in-process layer. */
  shared: Cache | null;
  bus: Bus;
  /** The in-process copies' clock (ms; tests move it); default Date.now. */
  localClock?: () => number;
  /** Whether the database is down, and since when (src/data/db-health.ts); none: copies are never held. */
  outage?: OutageWatch;
  /** How long after an outage was noticed the copies keep answering (SESSION_OUTAGE_GRACE); default 0. */
  outageGraceMs?: number;
}

/** What the caches need to know of the database's health (DatabaseHealth gives it). */
export interface OutageWatch {
  /** When the outage under way was noticed (ms, on the in-process copies' clock), or null while the database answers. */
  downSince(): number | null;
  /** What a look-up throws once an outage has outlasted the grace (a 503 with Retry-After). */
  refusal(): Error;
}

type Revived<T> = T & { [k: string]: unknown };
const DATE_FIELDS = [...new Set([...USER_DATE_COLUMNS, 'created_at', 'signed_in_at', 'last_used_at', 'expires_at'])];
function revive<T>(json: string): Revived<T> {
  const o = JSON.parse(json) as Record<string, unknown>;
  for (const f of DATE_FIELDS) if (typeof o[f] === 'string') o[f] = new Date(o[f]);
  return o as Revived<T>;
}

/** What validation needs of a user; secrets' hashes (the password's) stay in the database, never in a cache. */
const NO_SECRETS = Object.fromEntries(SECRET_USER_COLUMNS.map((c) => [c, null]));
const cacheable = (u: UserRecord): UserRecord => ({ ...u, ...NO_SECRETS });

/**
 * The session and user caches: an in-process LRU in front of the shared cache in front of the
 * database, kept coherent across instances.
 *
 * A reader that loaded a row from the database may write it to the caches after a writer has
 * already evicted them (the read started before the write). Left alone, that stale copy would
 * outlive a logout or revocation, and the once-a-minute `lastUsedAt` refresh would keep it alive
 * for good. So every cache fill follows "write, then check": a revocation first leaves a tombstone
 * (`r:<hash>`) and a user change a new version marker (`uv:<id>`), then evicts; a reader writes the
 * caches and only then looks for a tombstone or a changed marker, undoing its write if it finds
 * one. Either the reader sees the writer's mark, or its write landed before the writer's eviction.
 * In process, a record of when each key was last evicted (locally or by a bus message) does the same.
 */
export function createSessionCache(deps: SessionCacheDeps) {
  const { shared } = deps;
  const localNow = deps.localClock ?? Date.now;
  // Expired copies linger (unserved) so that an outage noticed just after their end can still hold them.
  const sessions = new Lru<SessionRecord>(100_000, deps.localClock, HELD_AFTER_END_MS);
  const users = new Lru<UserRecord>(100_000, deps.localClock, HELD_AFTER_END_MS);
  const graceMs = deps.outageGraceMs ?? 0;

  /**
   * The database outage's hold on the in-process copies: null while the database is up; while it is
   * down and the grace lasts, copies live at most HELD_AFTER_END_MS before the outage was noticed are
   * served until the grace ends; 'over' once it has (then nothing is answered from the caches).
   */
  function outage(): { from: number; until: number } | 'over' | null {
    const since = deps.outage?.downSince() ?? null;
    if (since === null) return null;
    const until = since + graceMs;
    return localNow() < until ? { from: since - HELD_AFTER_END_MS, until } : 'over';
  }
  /** The hold while the grace lasts; throws the outage's refusal once it is over. */
  function holdOrRefuse(): { from: number; until: number } | undefined {
    const o = outage();
    // Non-null: outage() answers 'over' only from deps.outage's downSince().
    if (o === 'over') throw deps.outage!.refusal();
    return o ?? undefined;
  }
  /** A copy held through the outage under way (within the grace), for a database read that just failed. */
  function held<V>(lru: Lru<V>, key: string): V | undefined {
    const o = outage();
    return o && o !== 'over' ? lru.get(key, undefined, o) : undefined;
  }
  // When each key was last evicted, as a position in one counter: a fill that started before that
  // position may hold the evicted copy. Per key, so evictions of other sessions cost a fill nothing.
  let position = 0;
  const sessionEvicted = new Lru<number>(100_000);
  const userEvicted = new Lru<number>(100_000);
  const evictedSince = (lru: Lru<number>, key: string, mark: number) => (lru.get(key) ?? -1) > mark;
  const sKey = (hash: string) => `s:${hash}`;
  const rKey = (hash: string) => `r:${hash}`;
  const uKey = (id: string) => `u:${id}`;
  const vKey = (id: string) => `uv:${id}`;

  function dropSessions(hashes: string[]): void {
    for (const h of hashes) {
      sessions.delete(h);
      sessionEvicted.set(h, ++position, EVICTED_TTL_MS);
    }
  }
  function dropUser(id: string): void {
    users.delete(id);
    userEvicted.set(id, ++position, EVICTED_TTL_MS);
  }

  const isRevoked = async (hash: string) => Boolean(await shared?.get(rKey(hash)));

  /**
   * Writes a copy, then reads a mark (tombstone or version): both sent at once on the one connection,
   * which Redis runs in order, so the write still lands before the check, in one round trip.
   */
  async function writeThenCheck(key: string, value: string, mark: string): Promise<string | null> {
    if (!shared) return null;
    const [, found] = await Promise.all([shared.set(key, value, SHARED_TTL_SEC), shared.get(mark)]);
    return found ?? null;
  }

  /** Sessions read from the database whose shared copy is yet to be written (fillChecked, after the caller's turn). */
  const filling = new Set<string>();

  /**
   * Shares a user copy read with its session. Its version marker was not read before that read, so the
   * copy is shared only when there is none at all (no change to the user in the marker's lifetime,
   * which outlasts any read) and no eviction reached this process since; otherwise the copy goes.
   */
  async function shareUser(u: UserRecord, mark: number): Promise<void> {
    const changed = await writeThenCheck(uKey(u.id), JSON.stringify(u), vKey(u.id));
    if (changed || evictedSince(userEvicted, u.id, mark)) await shared?.del(uKey(u.id));
  }

  /** Shares a session copy read from the database, and undoes both copies if an eviction overlapped the read. */
  async function fillChecked(hash: string, s: SessionRecord, mark: number): Promise<void> {
    const revoked = await writeThenCheck(sKey(hash), JSON.stringify(s), rKey(hash));
    if (revoked || evictedSince(sessionEvicted, hash, mark)) await undoSession(hash);
  }

  async function undoSession(hash: string): Promise<void> {
    sessions.delete(hash);
    await shared?.del(sKey(hash));
  }

  /**
   * A user read with its session (by the session's hash): kept in this process unless evicted since
   * `mark`; undefined when the row read is not the session's user (the caller then looks it up).
   */
  function keepUser(id: string, row: UserRecord | null, mark: number): UserRecord | null | undefined {
    if (!row) return row;
    if (row.id !== id) return undefined;
    const u = cacheable(row);
    if (!evictedSince(userEvicted, id, mark)) users.set(id, u, LOCAL_TTL_MS);
    return u;
  }

  /** A user copy from the shared cache, else from the database (shared after its version marker was read). */
  async function fetchUser(id: string): Promise<UserRecord | null> {
    const mark = position;
    // The version marker is read with the copy (one round trip), before any database read.
    const [cached, before] = shared ? await Promise.all([shared.get(uKey(id)), shared.get(vKey(id))]) : [null, null];
    if (cached) {
      const u = revive<UserRecord>(cached);
      if (!evictedSince(userEvicted, id, mark)) users.set(id, u, LOCAL_TTL_MS);
      // The database is down: the shared copy is all other instances have, so it is kept (written again,
      // whole lifetime) unless the user changed meanwhile (its version marker moved: then it goes).
      if (shared && outage() && (await writeThenCheck(uKey(id), cached, vKey(id))) !== before) {
        users.delete(id);
        await shared.del(uKey(id));
      }
      return u;
    }
    let row: UserRecord | null;
    try {
      row = await deps.findUser(id);
    } catch (err) {
      const kept = held(users, id);
      if (kept) return kept;
      throw err;
    }
    if (!row) return null;
    const u = cacheable(row);
    users.set(id, u, LOCAL_TTL_MS);
    const after = await writeThenCheck(uKey(id), JSON.stringify(u), vKey(id));
    if (after !== before || evictedSince(userEvicted, id, mark)) {
      users.delete(id);
      await shared?.del(uKey(id));
      const fresh = await deps.findUser(id);
      return fresh ? cacheable(fresh) : null;
    }
    return u;
  }

  /**
   * The shared copy of a session, kept in this process unless evicted since `mark`; 'revoked' when a
   * tombstone outranks it; null when there is none (or no shared cache).
   */
  async function sharedSession(hash: string, mark: number): Promise<SessionRecord | 'revoked' | null> {
    if (!shared) return null;
    // One round trip (node-redis pipelines both).
    const [cached, revoked] = await Promise.all([shared.get(sKey(hash)), isRevoked(hash)]);
    if (revoked) return 'revoked';
    if (!cached) return null;
    const s = revive<SessionRecord>(cached);
    if (!evictedSince(sessionEvicted, hash, mark)) sessions.set(hash, s, LOCAL_TTL_MS);
    return s;
  }

  /**
   * Cold look-ups in flight (by hash, and whether the user is read with it). Callers that miss the
   * same session meanwhile wait for that one read instead of each starting their own: a burst of
   * requests for a session not yet in this process (after a restart, say) costs one shared-cache
   * read or one database read, not one per request and a connection pool grown to its limit.
   */
  const inFlight = new Map<string, { mark: number; read: Promise<SessionLookup | null> }>();

  /** A session not in this process: the shared cache, else the database (see session()). */
  async function lookUp(hash: string, opts: { withUser?: boolean }, mark: number): Promise<SessionLookup | null> {
    const fromShared = await sharedSession(hash, mark);
    if (fromShared === 'revoked') return null;
    if (fromShared) return { s: fromShared, source: 'shared' };
    const both = opts.withUser ? deps.findSessionWithUser : undefined;
    let read: { session: SessionRecord; user: UserRecord | null | undefined } | null;
    try {
      read = both ? await both(hash) : await deps.findSession(hash).then((session) => session && { session, user: undefined });
    } catch (err) {
      // The read that found the database down (a copy that ended just before): held through the outage.
      const kept = held(sessions, hash);
      if (kept) return { s: kept, source: 'local' };
      throw err;
    }
    if (!read) return null;
    const s = read.session;
    const user = read.user === undefined ? undefined : keepUser(s.user_id, read.user, mark);
    if (evictedSince(sessionEvicted, hash, mark)) {
      // Something was evicted while this row was in flight, perhaps this one: read again, uncached.
      const fresh = await deps.findSession(hash);
      return fresh ? { s: fresh, source: 'db', user } : null;
    }
    sessions.set(hash, s, LOCAL_TTL_MS);
    // The shared copy is written and checked after the answer, not before it. A revocation that began
    // before this look-up did (its tombstone set) was refused above; one that began during it overlaps
    // this validation, which may answer as of its read. What the check protects is the caches: a copy
    // written after a revocation's eviction is undone, here and in the shared cache.
    // Sent after the caller's turn, so a lastUsedAt it records on the copy (storeSession) goes in the
    // same write. (The shared cache answers a failure with a fallback; should the check fail anyway,
    // the local copy goes.)
    if (shared) {
      filling.add(hash);
      setImmediate(() => {
        filling.delete(hash);
        // The copy as it is now (a later store may have replaced it); none if it was evicted meanwhile.
        const now = sessions.get(hash);
        if (now) fillChecked(hash, now, mark).catch(() => sessions.delete(hash));
        // Its user too, so another instance (or this one, its copy gone) can answer during an outage.
        if (user) shareUser(user, mark).catch(() => undefined);
      });
    }
    return { s, source: 'db', user };
  }

  /** Keys whose renewal is out (one each at a time). */
  const renewing = new Set<string>();
  /** Keys renewed during an outage, not to be tried again for a while (a held copy asks on every read). */
  const resting = new Lru<true>(100_000, deps.localClock);
  function renew(key: string, read: (mark: number) => Promise<void>): void {
    if (!shared || renewing.has(key) || resting.get(key)) return;
    renewing.add(key);
    read(position)
      .catch(() => undefined) // the copy then expires as it would have; its next reader reads again
      .finally(() => {
        renewing.delete(key);
        if (outage()) resting.set(key, true, OUTAGE_RENEW_EVERY_MS);
      });
  }
  const renewSession = {
    within: RENEW_WITHIN_MS,
    renew: (hash: string) =>
      renew(`s:${hash}`, async (mark) => {
        if ((await sharedSession(hash, mark)) === 'revoked') dropSessions([hash]);
      }),
  };
  /** A user copy is renewed as a reader that missed it would read it (it may be in no shared copy: see keepUser). */
  const renewUser = {
    within: RENEW_WITHIN_MS,
    renew: (id: string) => renew(`u:${id}`, () => fetchUser(id).then(() => undefined)),
  };

  return {
    async subscribe(): Promise<void> {
      await deps.bus.subscribe(CHANNEL_SESSION_REVOKED, (m) => dropSessions((m as { hashes?: string[] }).hashes ?? []));
      await deps.bus.subscribe(CHANNEL_USER_CHANGED, (m) => {
        const id = (m as { userId?: string }).userId;
        if (id) dropUser(id);
      });
    },

    /**
     * The in-process copies only, without waiting: the warm path of every validation. A copy close to
     * its end is renewed in the background from the shared cache, as its next reader would after it
     * expired: what the shared cache holds, unless an eviction overlapped the read.
     */
    localSession: (hash: string): SessionRecord | undefined => {
      const o = outage();
      return o === 'over' ? undefined : sessions.get(hash, renewSession, o ?? undefined);
    },
    localUser: (id: string): UserRecord | undefined => {
      const o = outage();
      return o === 'over' ? undefined : users.get(id, renewUser, o ?? undefined);
    },

    /**
     * The session with this hash. `withUser`: when the session has to be read from the database, its
     * user is read in the same statement where the database allows (one wait instead of a shared-cache
     * look-up, a database read and a cache write after it) and returned as `user`, fresh from the
     * database: kept in this process (a user change evicts it as any copy) and shared after the answer
     * only when the user has no version marker at all (see shareUser). `user` is absent when it was not
     * read so (the caller asks `user()`).
     *
     * During a database outage (see `outage`), copies this process held shortly before it was noticed
     * answer until SESSION_OUTAGE_GRACE after; then this throws the outage's refusal (503).
     */
    async session(hash: string, opts: { withUser?: boolean } = {}): Promise<SessionLookup | null> {
      const local = sessions.get(hash, undefined, holdOrRefuse());
      if (local) return { s: local, source: 'local' };
      const key = opts.withUser ? `${hash}+user` : hash;
      const running = inFlight.get(key);
      if (running) {
        // Its failure is this caller's too: a read of its own would meet the same outage, after as long a wait.
        const r = await running.read;
        // Shared unless something it read was evicted since it began: this caller may have begun after
        // that eviction (a revocation, a user change), so it reads for itself.
        const stale = evictedSince(sessionEvicted, hash, running.mark) || (r?.user !== undefined && evictedSince(userEvicted, r.s.user_id, running.mark));
        return stale ? lookUp(hash, opts, position) : r;
      }
      const mark = position;
      const read = lookUp(hash, opts, mark);
      inFlight.set(key, { mark, read });
      const done = () => {
        if (inFlight.get(key)?.read === read) inFlight.delete(key);
      };
      read.then(done, done);
      return read;
    },

    /** Stores a changed copy of a cached session (lastUsedAt), unless it was revoked meanwhile. */
    async storeSession(hash: string, s: SessionRecord): Promise<void> {
      // Evicted since it was read (logout, revocation, message from another instance): leave it out.
      // (A copy held through an outage is stored: its shared copy then lasts for other instances.)
      const o = outage();
      if (!sessions.get(hash, undefined, o && o !== 'over' ? o : undefined)) return;
      sessions.set(hash, s, LOCAL_TTL_MS);
      // A fill of this copy is about to be written and checked: it carries the change.
      if (!shared || filling.has(hash)) return;
      if (await writeThenCheck(sKey(hash), JSON.stringify(s), rKey(hash))) await undoSession(hash);
    },

    /**
     * Evicts sessions everywhere. `revoked` leaves tombstones first, so an in-flight read of a
     * deleted row cannot put it back; plain updates (refresh, activation) only evict.
     */
    async forgetSessions(hashes: string[], opts: { revoked: boolean }): Promise<void> {
      if (!hashes.length) return;
      dropSessions(hashes);
      if (shared) {
        if (opts.revoked) await Promise.all(hashes.map((h) => shared.set(rKey(h), '1', SHARED_TTL_SEC)));
        await shared.del(...hashes.map(sKey));
      }
      await deps.bus.publish(CHANNEL_SESSION_REVOKED, { hashes });
    },

    async user(id: string): Promise<UserRecord | null> {
      return users.get(id, undefined, holdOrRefuse()) ?? fetchUser(id);
    },

    /**
     * After an outage of the shared cache and bus: evictions and messages sent meanwhile were lost,
     * so every copy, here and shared, may be stale. Drop them all; the database is the truth.
     * (Revocations are deletions in the database, so a revoked session stays revoked.)
     */
    async resync(): Promise<void> {
      for (const h of sessions.keys()) dropSessions([h]);
      for (const id of users.keys()) dropUser(id);
      if (shared) await Promise.all([shared.purge('s:'), shared.purge('u:')]);
    },

    /** Drops cached copies of a user everywhere, so the next validation reads fresh data. */
    async forgetUser(id: string): Promise<void> {
      dropUser(id);
      if (shared) {
        await shared.set(vKey(id), randomUUID(), SHARED_TTL_SEC);
        await shared.del(uKey(id));
      }
      await deps.bus.publish(CHANNEL_USER_CHANGED, { userId: id });
    },
  };
}

export type SessionCache = ReturnType<typeof createSessionCache>;
