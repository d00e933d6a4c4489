import { randomUUID } from 'node:crypto';
import { amrList, amrText, withSecondFactor } from './sign-in-amr.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus, Cache } from '../cache/cache.js';
import type { SessionRecord, SessionRepository, SessionStatus } from '../data/repositories/session-repository.js';
import type { TxOption, UserRecord, UserRepository } from '../data/repositories/user-repository.js';
import { afterCommit } from '../data/unit-of-work.js';
import { AppError } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import type { Logger } from '../log/logger.js';
import { randomToken, sha256 } from './security/tokens.js';
import { isDatabaseUnavailable } from '../data/db-errors.js';
import { createSessionCache, type CacheSource, type OutageWatch } from './session-cache.js';
import { describeDevice } from './user-agent.js';

export { CHANNEL_SESSION_REVOKED, CHANNEL_USER_CHANGED } from './session-cache.js';

export const SESSION_TOKEN_PREFIX = 'ses';
const PREFIX_LENGTH = 12;
/** lastUsedAt is written at most this often per session (keeps validation read-only). */
const TOUCH_INTERVAL_MS = 60_000;
/**
 * How much later than SESSION_IDLE_TIMEOUT after its recorded last use a session is refused. A use is
 * recorded at most once per TOUCH_INTERVAL_MS, so the last real use may be up to that much later than
 * last_used_at; and a copy of the session in another instance's memory may predate a use recorded
 * elsewhere by up to its own minute (session-cache.ts LOCAL_TTL_MS). Refusing only past both means a
 * session is never refused while it was in fact used within the timeout: it ends between
 * SESSION_IDLE_TIMEOUT and SESSION_IDLE_TIMEOUT + 2 min after its last use.
 */
export const IDLE_SLACK_MS = TOUCH_INTERVAL_MS + 60_000;
/** Longest a recorded use waits for its database write (it is in the caches at once). */
const USE_FLUSH_MS = 1_000;

export interface ValidSession {
  session: SessionRecord;
  user: UserRecord;
  /** Where the answer came from: local memory, the shared cache, or the database. */
  source: CacheSource;
}

/** A session validate would accept from this process's memory alone (see peekLocal). */
export interface LocalHit {
  session: SessionRecord;
  user: UserRecord;
  hash: string;
}

export interface SessionServiceDeps {
  sessions: SessionRepository;
  users: UserRepository;
  /** Shared cache (Redis) when configured; null keeps only the in-process layer. */
  shared: Cache | null;
  bus: Bus;
  logger: Logger;
  clock?: () => Date;
  /** The in-process copies' clock (ms; tests move it); default Date.now. */
  localClock?: () => number;
  /** Told where each session and user lookup was answered from (metrics: cache hit ratio). */
  onLookup?: (cache: 'session' | 'user', source: CacheSource | 'miss') => void;
  ttlSec: number;
  pendingTtlSec: number;
  /** SESSION_IDLE_TIMEOUT: a session unused this long (plus IDLE_SLACK_MS) is expired; 0 or absent: never. */
  idleTimeoutSec?: number;
  /** SESSION_MAX_LIFETIME: no session lives past its sign-in plus this; absent: no cap. */
  maxLifetimeSec?: number;
  /** The database's health: while it is down, sessions known valid keep validating from the caches (see outageGraceSec). */
  outage?: OutageWatch;
  /** SESSION_OUTAGE_GRACE: how long after an outage began they do; default 0 (not at all). */
  outageGraceSec?: number;
}

export interface CreateSessionInput {
  ip?: string | null;
  userAgent?: string | null;
  /** A client-chosen device id; strict bridge validation compares it. */
  deviceId?: string | null;
  status?: SessionStatus;
  /** A full session whose sign-in itself proved two factors (a user-verified passkey): `two_factor_verified` from the start. */
  twoFactors?: boolean;
  /** How the user signed in (the sign-in seam's method). */
  signInMethod?: string | null;
  /** What the sign-in proved, as RFC 8176 values (the sign-in seam's, src/services/sign-in-amr.ts): the OpenID provider's `amr`. */
  amr?: readonly string[];
}

/**
 * Sessions a revocation ended, told inside its unit of work (the OpenID provider ends what they
 * authorized, src/oidc): their ids, and — for a revocation of every session of a user with none kept
 * (sign out everywhere) — that user. Expiry is not told. Signing out (revokeToken) is told with `signOut`:
 * it is not a revocation (what the session authorized stays), but it ends the session (back-channel logout).
 */
export interface SessionsRevoked {
  ids: string[];
  everyOf: string | null;
  signOut?: boolean;
}
export type RevocationListener = (revoked: SessionsRevoked, tx: TxOption['tx']) => Promise<void>;

/** Thrown for an unknown or revoked session; the message is one the clients match on. */
export const invalidSession = () => new AppError(401, Codes.INVALID_SESSION, 'Invalid session');
export const expiredSession = () => new AppError(401, Codes.SESSION_EXPIRED, 'Session expired');

/**
 * When the session's lifetime began: its sign-in. A password change re-stamps created_at (restamp)
 * and leaves this; sessions stored before the column existed have none, and began at created_at.
 */
export const signedInAt = (s: Pick<SessionRecord, 'created_at' | 'signed_in_at'>): Date => new Date(s.signed_in_at ?? s.created_at);

/** A stored time in ms, without a new Date when it is one already (the fast lane asks on every request). */
const msOf = (d: Date | string | number): number => (d instanceof Date ? d.getTime() : new Date(d).getTime());

/**
 * A session opened before the password last changed is dead even if its row survived (a change cut
 * short between writing the password and revoking the sessions): the password is what it proved.
 * The session a change keeps (the caller's own) is re-stamped by the change, see UserService.setPassword.
 */
export function predatesPasswordChange(s: Pick<SessionRecord, 'created_at'>, u: Pick<UserRecord, 'password_changed_at'>): boolean {
  return u.password_changed_at != null && new Date(s.created_at).getTime() < new Date(u.password_changed_at).getTime();
}

/**
 * Sessions: opaque tokens, stored as SHA-256 hashes. Validation goes hash → in-process LRU → shared
 * cache → database; revocation deletes the row, leaves a tombstone, drops the shared entry, and tells
 * every instance to drop its local copy (session-cache.ts keeps in-flight reads from undoing that).
 */
export function createSessionService(deps: SessionServiceDeps) {
  const clock = deps.clock ?? (() => new Date());
  const idleMs = (deps.idleTimeoutSec ?? 0) * 1000;
  const maxMs = deps.maxLifetimeSec ? deps.maxLifetimeSec * 1000 : Infinity;

  const cache = createSessionCache({
    findSession: (hash) => deps.sessions.findByHash(hash),
    findUser: (id) => deps.users.findById(id),
    // Non-null: guarded by the && on the same line.
    findSessionWithUser: deps.sessions.findByHashWithUser && ((hash) => deps.sessions.findByHashWithUser!(hash)),
    shared: deps.shared,
    bus: deps.bus,
    localClock: deps.localClock,
    outage: deps.outage,
    outageGraceMs: (deps.outageGraceSec ?? 0) * 1000,
  });
  const forgetSessions = cache.forgetSessions;
  const revocationListeners: RevocationListener[] = [];
  const revoked = async (r: SessionsRevoked, tx: TxOption['tx']) => {
    for (const listener of revocationListeners) await listener(r, tx);
  };

  // Last uses waiting for the database: written together within USE_FLUSH_MS, one statement for many.
  const uses = new Map<string, Date>();
  let useTimer: NodeJS.Timeout | null = null;
  let useWrites: Promise<void> = Promise.resolve();
  // Uses being written: a copy read from the database meanwhile (the cached one evicted by a refresh, say) predates them.
  const writing = new Map<string, Date>();

  /** The session's last recorded use, or a later one of this process's on its way to the database (ms). */
  function lastUse(s: SessionRecord): number {
    const at = msOf(s.last_used_at);
    if (uses.size === 0 && writing.size === 0) return at;
    return Math.max(at, uses.get(s.id)?.getTime() ?? 0, writing.get(s.id)?.getTime() ?? 0);
  }

  /**
   * When the session ends (ms): its expires_at, its sign-in plus SESSION_MAX_LIFETIME, or its last use
   * plus SESSION_IDLE_TIMEOUT (and IDLE_SLACK_MS), whichever comes first. Every validation path asks
   * this one (validate, peekLocal for the fast lane, liveSessionId), on whichever copy it holds.
   */
  function endOf(s: SessionRecord): number {
    let end = Math.min(msOf(s.expires_at), msOf(s.signed_in_at ?? s.created_at) + maxMs);
    if (idleMs > 0) end = Math.min(end, lastUse(s) + idleMs + IDLE_SLACK_MS);
    return end;
  }
  const ended = (s: SessionRecord) => endOf(s) <= clock().getTime();
  /** A new expires_at `ttlSec` from now, never past the session's sign-in plus SESSION_MAX_LIFETIME. */
  const expiryFrom = (now: Date, ttlSec: number, signedIn: Date) => new Date(Math.min(now.getTime() + ttlSec * 1000, signedIn.getTime() + maxMs));

  function flushUses(): Promise<void> {
    if (useTimer) clearTimeout(useTimer);
    useTimer = null;
    if (uses.size === 0) return useWrites;
    const batch = [...uses].map(([id, at]) => ({ id, at }));
    uses.clear();
    for (const u of batch) writing.set(u.id, u.at);
    const write = deps.sessions
      .recordUse(batch)
      .catch((err: Error) => deps.logger.warn({ err: err.message, sessions: batch.length }, 'could not record session use'))
      .finally(() => {
        for (const u of batch) if (writing.get(u.id) === u.at) writing.delete(u.id);
      });
    useWrites = Promise.all([useWrites, write]).then(() => undefined);
    return useWrites;
  }

  function touch(s: SessionRecord, hash: string): void {
    const now = clock();
    if (now.getTime() - new Date(s.last_used_at).getTime() < TOUCH_INTERVAL_MS) return;
    s.last_used_at = now;
    // Validation never waits on this write; the database gets it within a second, with others.
    uses.set(s.id, now);
    if (!useTimer) {
      useTimer = setTimeout(() => void flushUses(), USE_FLUSH_MS);
      useTimer.unref();
    }
    cache.storeSession(hash, s).catch((err: Error) => deps.logger.warn({ err: err.message }, 'could not record session use'));
  }

  return {
    subscribe: () => cache.subscribe(),

    /** Writes the last uses not yet written (before the database closes); resolves when they are. */
    flushUses,

    async create(userId: string, input: CreateSessionInput = {}, opts: TxOption = {}): Promise<{ token: string; session: SessionRecord }> {
      const token = randomToken(SESSION_TOKEN_PREFIX);
      const now = clock();
      const status = input.status ?? 'active';
      const ttl = status === 'pending_2fa' ? deps.pendingTtlSec : deps.ttlSec;
      const session = await deps.sessions.create(
        {
          id: randomUUID(),
          token_hash: sha256(token),
          session_prefix: token.slice(0, PREFIX_LENGTH),
          user_id: userId,
          status,
          ip_address: input.ip?.slice(0, 64) ?? null,
          user_agent: input.userAgent?.slice(0, 512) ?? null,
          user_device: describeDevice(input.userAgent),
          device_id: input.deviceId?.slice(0, 128) ?? null,
          two_factor_verified: status === 'active' && input.twoFactors === true,
          sign_in_method: input.signInMethod?.slice(0, 40) ?? null,
          amr: amrText(input.amr ?? []),
          created_at: now,
          signed_in_at: now,
          last_used_at: now,
          expires_at: expiryFrom(now, ttl, now),
        },
        opts,
      );
      return { token, session };
    },

    /**
     * validate's answer when it needs no wait and no clean-up: an active, unexpired session and a user
     * who may sign in, both in this process's memory. Changes nothing (no lastUsedAt, no lookup
     * counts); null for anything else, which validate then answers. For the fast lane (src/http/fast-lane).
     */
    peekLocal(token: string | null | undefined): LocalHit | null {
      if (!token || token.length > 200) return null;
      const hash = sha256(token);
      const s = cache.localSession(hash);
      if (!s || s.status !== 'active' || ended(s)) return null;
      const user = cache.localUser(s.user_id);
      if (!user || user.deleted_at || user.disabled_at || predatesPasswordChange(s, user)) return null;
      return { session: s, user, hash };
    },

    /** A peeked hit used as validate would use it: counted as two local lookups, lastUsedAt kept fresh. */
    useLocal(hit: LocalHit): ValidSession {
      deps.onLookup?.('session', 'local');
      deps.onLookup?.('user', 'local');
      touch(hit.session, hit.hash);
      return { session: hit.session, user: hit.user, source: 'local' };
    },

    /** Resolves a token to its session and user, or throws 401 "Invalid session" / "Session expired". */
    async validate(token: string | undefined | null, opts: { allowPending?: boolean } = {}): Promise<ValidSession> {
      if (!token || token.length > 200) throw invalidSession();
      const hash = sha256(token);
      // Warm path: both copies in this process, read without a wait (each await is a turn of the queue).
      const local = cache.localSession(hash);
      const found = local ? { s: local, source: 'local' as const, user: undefined } : await cache.session(hash, { withUser: true });
      if (!found) throw invalidSession();
      const { s, source } = found;
      // Expired, idle past SESSION_IDLE_TIMEOUT or past SESSION_MAX_LIFETIME: all the same to the client.
      if (ended(s)) {
        await forgetSessions([hash], { revoked: false });
        // During a database outage the row stays for the expiry job; the answer is the same.
        await deps.sessions.deleteWhere({ id: s.id }).catch((err: unknown) => {
          if (!isDatabaseUnavailable(err)) throw err;
        });
        throw expiredSession();
      }
      if (s.status !== 'active' && !opts.allowPending) {
        throw new AppError(401, Codes.TWO_FACTOR_REQUIRED, 'Two-factor authentication required');
      }
      // Read with the session from the database (then fresh), or not (undefined): then this process's copy, or the caches.
      const read = found.user;
      const localUser = read === undefined ? cache.localUser(s.user_id) : undefined;
      const user = read !== undefined ? read : (localUser ?? (await cache.user(s.user_id)));
      deps.onLookup?.('session', source);
      // The user cache does not say whether Redis or the database answered a local miss.
      deps.onLookup?.('user', localUser ? 'local' : 'miss');
      if (!user || user.deleted_at || user.disabled_at || predatesPasswordChange(s, user)) throw invalidSession();
      touch(s, hash);
      return { session: s, user, source };
    },

    /**
     * The id of the token's session when validate would accept it (pending two-factor included), else
     * null; unlike validate it changes nothing (no expiry clean-up, no lastUsedAt), so it can run ahead
     * of validation (rate-limit keying) without changing the answer validation then gives.
     */
    async liveSessionId(token: string | null | undefined): Promise<string | null> {
      if (!token || token.length > 200) return null;
      const hash = sha256(token);
      const s = cache.localSession(hash) ?? (await cache.session(hash))?.s;
      if (!s || ended(s)) return null;
      const user = cache.localUser(s.user_id) ?? (await cache.user(s.user_id));
      return user && !user.deleted_at && !user.disabled_at && !predatesPasswordChange(s, user) ? s.id : null;
    },

    /** Extends an active session to a full lifetime from now, never past its sign-in plus SESSION_MAX_LIFETIME. */
    async refresh(token: string): Promise<ValidSession> {
      const v = await this.validate(token);
      const expires = expiryFrom(clock(), deps.ttlSec, signedInAt(v.session));
      // With its last use (validate just recorded it): the copies go, and the next read is the row's.
      await deps.sessions.update(v.session.id, { expires_at: expires, last_used_at: new Date(lastUse(v.session)) });
      await forgetSessions([v.session.token_hash], { revoked: false });
      return { ...v, session: { ...v.session, expires_at: expires } };
    },

    /**
     * A live pending two-factor session (of `userId`, when given) becomes a full one, same id and token;
     * null for any other session. Inside a unit of work the row changes with it (the sign-in event) and
     * the caches are told once it commits.
     */
    /** A pending session made full by its second factor (`secondFactor`: how, for its `amr`). */
    async activate(sessionId: string, userId?: string, opts: TxOption & { secondFactor?: 'code' | 'trusted_device' } = {}): Promise<SessionRecord | null> {
      const s = await deps.sessions.findById(sessionId);
      if (!s || s.status !== 'pending_2fa' || ended(s)) return null;
      if (userId !== undefined && s.user_id !== userId) return null;
      // The lifetime began at the password step (signed_in_at), not at the second factor.
      const expires = expiryFrom(clock(), deps.ttlSec, signedInAt(s));
      const amr = amrText(withSecondFactor(amrList(s.amr), opts.secondFactor ?? 'code'));
      await deps.sessions.update(s.id, { status: 'active', two_factor_verified: true, expires_at: expires, amr }, opts);
      await afterCommit(opts.tx, () => forgetSessions([s.token_hash], { revoked: false }));
      return { ...s, status: 'active', two_factor_verified: true, expires_at: expires, amr };
    },

    /**
     * Marks a kept session as opened at `at` (a password change the session's owner just made), so the
     * password-change check in validate lets it live; caches drop their copy after the commit. Its
     * lifetime still counts from its sign-in (signed_in_at, kept; written now for a session from before
     * the column): a password change is one factor, and changing it again and again must not keep a
     * session past SESSION_MAX_LIFETIME.
     */
    async restamp(sessionId: string, at: Date, opts: TxOption = {}): Promise<void> {
      const s = await deps.sessions.findById(sessionId);
      if (!s) return;
      await deps.sessions.update(s.id, { created_at: at, signed_in_at: signedInAt(s) }, opts);
      await afterCommit(opts.tx, () => forgetSessions([s.token_hash], { revoked: false }));
    },

    /** Ends the token's session; whether there was one. Inside a unit of work the row goes with it. */
    async revokeToken(token: string, opts: TxOption = {}): Promise<boolean> {
      const hash = sha256(token);
      const s = await deps.sessions.findByHash(hash);
      // Refused at once everywhere, even before a surrounding unit of work commits (the safe direction).
      await forgetSessions([hash], { revoked: true });
      if (!s) return false;
      const ended = (await deps.sessions.deleteWhere({ id: s.id }, opts)).length > 0;
      if (ended) await revoked({ ids: [s.id], everyOf: null, signOut: true }, opts.tx);
      return ended;
    },

    /** Ends one session by id; inside a unit of work the row goes with it (the caches are told at once: the safe direction). */
    async revokeById(sessionId: string, opts: TxOption = {}): Promise<boolean> {
      const gone = await deps.sessions.deleteWhere({ id: sessionId }, opts);
      await forgetSessions(
        gone.map((s) => s.token_hash),
        { revoked: true },
      );
      if (gone.length) await revoked({ ids: gone.map((s) => s.id), everyOf: null }, opts.tx);
      return gone.length > 0;
    },

    /**
     * Revokes every session of a user, optionally keeping one (the caller's own). Returns the count.
     * Inside a unit of work the rows go with it and the caches are told once it commits.
     */
    async revokeAllForUser(userId: string, exceptSessionId?: string, opts: TxOption = {}): Promise<number> {
      const gone = await deps.sessions.deleteWhere({ user_id: userId, exceptId: exceptSessionId }, opts);
      if (gone.length || !exceptSessionId) await revoked({ ids: gone.map((s) => s.id), everyOf: exceptSessionId ? null : userId }, opts.tx);
      await afterCommit(
        opts.tx,
        () =>
          forgetSessions(
            gone.map((s) => s.token_hash),
            { revoked: true },
          ),
        (err) => deps.logger.warn({ err: (err as Error).message }, 'could not evict revoked sessions from caches'),
      );
      return gone.length;
    },

    /** Registers a listener told of every revocation, inside its unit of work (see SessionsRevoked). */
    onRevoked(listener: RevocationListener): void {
      revocationListeners.push(listener);
    },

    /**
     * The user's stored sessions, each with expires_at as validation sees it: the earliest of its
     * expiry, its idle end and its lifetime's end (a session idle past SESSION_IDLE_TIMEOUT lists as expired).
     */
    async listForUser(userId: string): Promise<SessionRecord[]> {
      return (await deps.sessions.listByUser(userId)).map((s) => {
        const end = endOf(s);
        return end < msOf(s.expires_at) ? { ...s, expires_at: new Date(end) } : s;
      });
    },

    /** Drops cached copies of a user everywhere, so the next validation reads fresh data. */
    invalidateUser: (userId: string): Promise<void> => cache.forgetUser(userId),

    /** Forgets every cached session and user (here and shared) after invalidations may have been lost. */
    resync: (): Promise<void> => cache.resync(),

    /**
     * Deletes expired sessions in batches of `batch` until none is left or `max` went; returns how many.
     * After each batch it rests as long as the batch took (`rest` times that), so a run of millions
     * takes at most about half of the database's core from validation on a small machine.
     * Caches are left alone: validation refuses an expired copy by its expires_at, and copies age out.
     */
    async pruneExpired(opts: { batch?: number; max?: number; rest?: number } = {}): Promise<number> {
      const batch = opts.batch ?? 5000;
      const max = opts.max ?? Number.MAX_SAFE_INTEGER;
      const rest = opts.rest ?? 1;
      const now = clock();
      let total = 0;
      while (total < max) {
        const want = Math.min(batch, max - total);
        const started = performance.now();
        const n = await deps.sessions.deleteExpired(now, want);
        total += n;
        if (n < want) break;
        if (rest > 0) await sleep((performance.now() - started) * rest);
      }
      return total;
    },

    /** Expired sessions still stored (the doctor reports it). */
    expiredBacklog: () => deps.sessions.countExpired(clock()),
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
