import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { AuditActor, AuditEvent, AuditOutcome } from '../../audit/audit-types.js';
import { dialectOf } from '../sequelize.js';

/** One stored event, as the service hands it over (the id time-ordered, details already cleaned). */
export interface AuditRow {
  id: string;
  type: string;
  at: Date;
  outcome: AuditOutcome;
  actor: AuditActor;
  user_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  identifier: string | null;
  details: Record<string, unknown>;
}

/** What a page read filters on (families are expanded to their declared types by the service). */
export interface AuditQuery {
  userId?: string;
  actorId?: string;
  types?: string[];
  outcome?: AuditOutcome;
  ip?: string;
  since?: Date;
  until?: Date;
  /** Only events with an id below this one (the keyset cursor). */
  beforeId?: string;
  limit: number;
}

/** Where an earlier event came from (the new-device check compares sign-ins by these). */
export interface AuditSource {
  id: string;
  ip: string | null;
  user_agent: string | null;
}

interface TxOption {
  tx?: Transaction | null;
}

/** The one reader and writer of audit_events (app.repos.audit). */
export interface AuditRepository {
  insert(row: AuditRow, opts?: TxOption): Promise<void>;
  /** Newest first. */
  list(q: AuditQuery): Promise<AuditEvent[]>;
  /** Every event about a user, oldest first (the personal-data export). */
  listByUser(userId: string, opts?: TxOption): Promise<AuditEvent[]>;
  /**
   * Ip and agent of a user's events of one type with ids in (afterId, beforeId), newest first, at most
   * `limit`: a range read of the (user_id, id) index, the type checked on the rows it reads.
   */
  sourcesOf(userId: string, type: string, range: { afterId?: string; beforeId: string; limit: number }): Promise<AuditSource[]>;
  /**
   * How many events of `type` fall in each window [from, to) (the console's charts). One statement,
   * one range count per window on the (type, id) index (`audit_events_type`): ids begin
   * with their time, so a window of time is a range of ids and PostgreSQL counts it from the index
   * alone (an index-only scan), never reading an event. An id may run up to a minute ahead of its
   * event's time under a burst (event-id.ts), so a bucket's edge is exact to that minute.
   */
  countBuckets(type: string, windows: readonly (readonly [Date, Date])[]): Promise<number[]>;
  /** Deletes at most `batch` events older than `before`; returns how many went. */
  pruneBatch(before: Date, batch: number): Promise<number>;
  /**
   * Erasure: the person's address, agent and identifier are removed from past events about them, by
   * them, or attempts on their identifier, while the events themselves stay.
   */
  anonymize(userId: string, identifiers: string[], opts?: TxOption): Promise<number>;
}

interface Raw {
  id: string;
  type: string;
  at: Date | string;
  outcome: AuditOutcome;
  actor_id: string | null;
  actor_type: string | null;
  actor_via: string | null;
  user_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  identifier: string | null;
  details: string | Record<string, unknown>;
}

const COLUMNS = 'id, type, at, outcome, actor_id, actor_type, actor_via, user_id, ip, user_agent, request_id, identifier, details';

/** The smallest id an event made at `ms` can have (its first 48 bits are `ms`, the rest zero). */
function idFloor(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
}
/** How far an id's time may run ahead of its event's (4096 events in one millisecond borrow the next). */
const ID_LEAD_MS = 60_000;

function toEvent(r: Raw): AuditEvent {
  const details = typeof r.details === 'string' ? (JSON.parse(r.details) as Record<string, unknown>) : { ...r.details };
  if (r.identifier) details.identifier = r.identifier;
  // An OpenID client's id is kept in actor_id (actor_via says it is a client's, not a user's).
  const actor: AuditActor =
    r.actor_via === 'oidc_client' && r.actor_id
      ? { via: 'oidc_client', client_id: r.actor_id }
      : r.actor_id
        ? { id: r.actor_id, user_type: r.actor_type ?? 'user' }
        : r.actor_via === 'cli'
          ? { via: 'cli' }
          : null;
  return {
    id: r.id,
    type: r.type,
    // SQLite hands back the text Sequelize wrote ('2026-11-26 12:00:00.000 +00:00'), which Date reads.
    at: (r.at instanceof Date ? r.at : new Date(r.at)).toISOString(),
    outcome: r.outcome,
    actor,
    user_id: r.user_id,
    ip: r.ip,
    user_agent: r.user_agent,
    request_id: r.request_id,
    details,
  };
}

export function createAuditRepository(sequelize: Sequelize): AuditRepository {
  const select = (sql: string, replacements: unknown[], tx?: Transaction | null) =>
    sequelize.query<Raw>(sql, { type: QueryTypes.SELECT, replacements, transaction: tx ?? undefined });

  return {
    async insert(row, opts) {
      const actorId = row.actor && 'id' in row.actor ? row.actor.id : row.actor && 'client_id' in row.actor ? row.actor.client_id.slice(0, 36) : null;
      const actorType = row.actor && 'id' in row.actor ? row.actor.user_type : null;
      const actorVia = row.actor && 'via' in row.actor ? row.actor.via : null;
      await sequelize.query(`INSERT INTO audit_events (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, {
        replacements: [
          row.id,
          row.type,
          row.at,
          row.outcome,
          actorId,
          actorType,
          actorVia,
          row.user_id,
          row.ip,
          row.user_agent,
          row.request_id,
          row.identifier,
          JSON.stringify(row.details),
        ],
        transaction: opts?.tx ?? undefined,
      });
    },

    async list(q) {
      const where: string[] = [];
      const args: unknown[] = [];
      const add = (clause: string, ...values: unknown[]) => {
        where.push(clause);
        args.push(...values);
      };
      if (q.userId !== undefined) add('user_id = ?', q.userId);
      if (q.actorId !== undefined) add('actor_id = ?', q.actorId);
      if (q.outcome !== undefined) add('outcome = ?', q.outcome);
      if (q.ip !== undefined) add('ip = ?', q.ip);
      // Ids begin with their time (UUIDv7), so a window is also a range of ids: the primary key (or the
      // id part of a filter's index) reads just that range, newest first, wherever it lies in the year.
      // `at` stays the exact test (an id may run a little ahead of its time, event-id.ts).
      if (q.since) add('at >= ? AND id >= ?', q.since, idFloor(q.since.getTime()));
      if (q.until) add('at < ? AND id < ?', q.until, idFloor(q.until.getTime() + ID_LEAD_MS));
      if (q.beforeId) add('id < ?', q.beforeId);
      const page = (extra: string[]) => {
        const all = [...extra, ...where];
        return `SELECT ${COLUMNS} FROM audit_events${all.length ? ` WHERE ${all.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
      };
      if (!q.types) return (await select(page([]), [...args, q.limit])).map(toEvent);
      if (!q.types.length) return [];
      if (q.types.length === 1) return (await select(page(['type = ?']), [q.types[0], ...args, q.limit])).map(toEvent);
      // Several types (a family): one page per type, each an index range read on (type, id), merged.
      // As `type IN (…)` the planner can only walk every event newest first and test the type (slow
      // for a rare family), or collect every event of the types and sort them (slow for a common one).
      const branches = q.types.map(() => `SELECT * FROM (${page(['type = ?'])}) AS t`);
      const sql = `SELECT ${COLUMNS} FROM (${branches.join(' UNION ALL ')}) AS merged ORDER BY id DESC LIMIT ?`;
      return (await select(sql, [...q.types.flatMap((t) => [t, ...args, q.limit]), q.limit])).map(toEvent);
    },

    async listByUser(userId, opts) {
      return (await select(`SELECT ${COLUMNS} FROM audit_events WHERE user_id = ? ORDER BY id`, [userId], opts?.tx)).map(toEvent);
    },

    async sourcesOf(userId, type, range) {
      const after = range.afterId ? ' AND id > ?' : '';
      return sequelize.query<AuditSource>(
        `SELECT id, ip, user_agent FROM audit_events WHERE user_id = ? AND id < ?${after} AND type = ? ORDER BY id DESC LIMIT ?`,
        {
          type: QueryTypes.SELECT,
          replacements: [userId, range.beforeId, ...(range.afterId ? [range.afterId] : []), type, range.limit],
        },
      );
    },

    async countBuckets(type, windows) {
      if (!windows.length) return [];
      const branches: string[] = [];
      const args: unknown[] = [];
      windows.forEach(([from, to], i) => {
        branches.push(`SELECT ${i} AS b, COUNT(*) AS n FROM audit_events WHERE type = ? AND id >= ? AND id < ?`);
        args.push(type, idFloor(from.getTime()), idFloor(to.getTime()));
      });
      const rows = await sequelize.query<{ b: number | string; n: number | string }>(branches.join(' UNION ALL '), {
        type: QueryTypes.SELECT,
        replacements: args,
      });
      const out = new Array<number>(windows.length).fill(0);
      for (const r of rows) out[Number(r.b)] = Number(r.n);
      return out;
    },

    async pruneBatch(before, batch) {
      // One statement per batch, its own transaction (as the session-expiry job's): row locks last one
      // batch, and two runners pass each other on PostgreSQL (SKIP LOCKED). The index on `at` finds them.
      const lock = dialectOf(sequelize) === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
      const n = await sequelize.query(
        `DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < :before ORDER BY at LIMIT ${Math.max(1, Math.floor(batch))}${lock})`,
        { replacements: { before }, type: QueryTypes.BULKDELETE },
      );
      return Number(n);
    },

    async anonymize(userId, identifiers, opts) {
      const tx = opts?.tx ?? undefined;
      const idList = identifiers.filter(Boolean);
      const byIdentifier = idList.length ? ` OR identifier IN (${idList.map(() => '?').join(', ')})` : '';
      // RETURNING counts on both dialects (SQLite's driver reports no affected rows for a raw UPDATE).
      const rows = await sequelize.query<{ id: string }>(
        // Events they did to others too (an admin erased): the address and agent there are theirs.
        `UPDATE audit_events SET ip = NULL, user_agent = NULL, identifier = NULL WHERE (user_id = ? OR actor_id = ?${byIdentifier}) AND (ip IS NOT NULL OR user_agent IS NOT NULL OR identifier IS NOT NULL) RETURNING id`,
        { type: QueryTypes.SELECT, replacements: [userId, userId, ...idList], transaction: tx },
      );
      return rows.length;
    },
  };
}
