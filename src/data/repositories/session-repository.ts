import { Op, QueryTypes, type Sequelize } from 'sequelize';
import type { TxOption, UserRecord } from './user-repository.js';
import { defineSessionModel } from '../models/session.model.js';
import { dialectOf } from '../sequelize.js';

export type SessionStatus = 'active' | 'pending_2fa';

export interface SessionRecord {
  id: string;
  token_hash: string;
  session_prefix: string;
  user_id: string;
  status: SessionStatus;
  ip_address: string | null;
  user_agent: string | null;
  user_device: string | null;
  device_id: string | null;
  two_factor_verified: boolean;
  /** The sign-in seam's method (`password`, `passkey`, `social:github`…); null before it was recorded. */
  sign_in_method?: string | null;
  /** RFC 8176 values, space-separated (the sign-in seam's, src/services/sign-in-amr.ts); null before they were recorded. */
  amr?: string | null;
  created_at: Date;
  /**
   * The sign-in that began the session: its lifetime (SESSION_MAX_LIFETIME) counts from here. Unlike
   * created_at, a password change does not move it; null for sessions stored before it was recorded.
   */
  signed_in_at?: Date | null;
  last_used_at: Date;
  expires_at: Date;
}

/** A session a deletion removed. */
export interface DeletedSession {
  id: string;
  token_hash: string;
}

export interface SessionRepository {
  create(s: SessionRecord, opts?: TxOption): Promise<SessionRecord>;
  findByHash(tokenHash: string): Promise<SessionRecord | null>;
  /**
   * PostgreSQL only (absent on SQLite, where a read is no round trip): the session with this hash and
   * its live user (null when none, or deleted), in one statement — what a cold validation reads. The
   * user has the user model's columns as defined now (installed modules' fields included), typed as the
   * model's own reads give them (one connection's parsers), secrets included as findById gives them.
   */
  findByHashWithUser?(tokenHash: string): Promise<{ session: SessionRecord; user: UserRecord | null } | null>;
  findById(id: string): Promise<SessionRecord | null>;
  listByUser(userId: string): Promise<SessionRecord[]>;
  update(id: string, values: Partial<SessionRecord>, opts?: TxOption): Promise<void>;
  /** Writes each session's last use, many in one statement; a session deleted meanwhile stays deleted. */
  recordUse(uses: { id: string; at: Date }[]): Promise<void>;
  /** Deletes and returns the sessions removed: their ids and token hashes (to evict them from caches). */
  deleteWhere(where: { id?: string; user_id?: string; exceptId?: string }, opts?: TxOption): Promise<DeletedSession[]>;
  /** Deletes up to `batch` sessions expired before `now`, in one short statement; returns how many. */
  deleteExpired(now: Date, batch: number): Promise<number>;
  /** How many sessions expired before `now` are still stored (the expiry job's backlog). */
  countExpired(now: Date): Promise<number>;
  /** Sessions that are active and not expired at `now` (the metrics gauge). */
  countActive(now: Date): Promise<number>;
  /**
   * The same, counted exactly up to `cap` and beyond it the planner's estimate on PostgreSQL (the
   * console's dashboard: an exact count reads every live session's index entry, seconds at millions).
   */
  countActiveCapped(now: Date, cap: number): Promise<{ total: number; exact: boolean }>;
}

/** Sessions whose last use one statement writes. */
const USE_BATCH = 500;

export function createSessionRepository(sequelize: Sequelize): SessionRepository {
  const Session = defineSessionModel(sequelize);
  const pg = dialectOf(sequelize) === 'postgres';
  const row = (m: { get(o: { plain: true }): unknown }) => m.get({ plain: true }) as SessionRecord;
  const plain = (m: { get(o: { plain: true }): unknown } | null) => (m ? row(m) : null);

  async function deleteIds(rows: DeletedSession[], opts?: TxOption): Promise<DeletedSession[]> {
    if (!rows.length) return [];
    await Session.destroy({ where: { id: rows.map((r) => r.id) }, transaction: opts?.tx ?? undefined });
    return rows;
  }

  /** A read of both rows: its statement, and which of its columns is which record's field. */
  interface WithUserStatement {
    sql: string;
    /** [field, column alias] of each record. */
    sessionColumns: [string, string][];
    userColumns: [string, string][];
  }
  /** The statement of findByHashWithUser for a user model (the user repository redefines it when module fields change). */
  const withUserSql = new WeakMap<object, WithUserStatement>();
  function withUserStatement(): WithUserStatement {
    // Defined by the user repository (user.model.ts); the one current under its name.
    const User = sequelize.models.User;
    const known = withUserSql.get(User);
    if (known) return known;
    const q = (c: string) => sequelize.getQueryInterface().quoteIdentifier(c);
    const columns = (m: typeof User, table: string, alias: (name: string) => string) =>
      Object.entries(m.getAttributes()).map(([name, a]) => ({ name, as: alias(name), select: `${table}.${q(a.field ?? name)} AS ${q(alias(name))}` }));
    const session = columns(Session, 's', (name) => name);
    const user = columns(User, 'u', (name) => `u:${name}`);
    const select = [...session, ...user].map((c) => c.select).join(', ');
    const made: WithUserStatement = {
      sql: `SELECT ${select} FROM sessions s LEFT JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL WHERE s.token_hash = $1 LIMIT 1`,
      sessionColumns: session.map((c) => [c.name, c.as]),
      userColumns: user.map((c) => [c.name, c.as]),
    };
    withUserSql.set(User, made);
    return made;
  }

  // The columns are the model's attributes, so the record has the model's fields: the one cast of a joined row.
  const recordOf = <T>(row: Record<string, unknown>, columns: [string, string][]): T => Object.fromEntries(columns.map(([name, as]) => [name, row[as]])) as T;

  const findByHashWithUser = async (tokenHash: string) => {
    const { sql, sessionColumns, userColumns } = withUserStatement();
    const [row] = await sequelize.query<Record<string, unknown>>(sql, { bind: [tokenHash], type: QueryTypes.SELECT, raw: true });
    if (!row) return null;
    return {
      session: recordOf<SessionRecord>(row, sessionColumns),
      user: row['u:id'] == null ? null : recordOf<UserRecord>(row, userColumns),
    };
  };

  return {
    ...(pg ? { findByHashWithUser } : {}),
    async create(s, opts) {
      return row(await Session.create({ ...s }, { transaction: opts?.tx ?? undefined }));
    },
    async findByHash(tokenHash) {
      return plain(await Session.findOne({ where: { token_hash: tokenHash } }));
    },
    async findById(id) {
      return plain(await Session.findOne({ where: { id } }));
    },
    async listByUser(userId) {
      const rows = await Session.findAll({ where: { user_id: userId }, order: [['created_at', 'DESC']] });
      return rows.map(row);
    },
    async update(id, values, opts) {
      await Session.update(values, { where: { id }, transaction: opts?.tx ?? undefined });
    },
    async recordUse(uses) {
      // Replacements are escaped inline by the dialect (a Date as the model stores it), so no bind limit applies.
      const time = pg ? '::timestamptz' : '';
      for (let i = 0; i < uses.length; i += USE_BATCH) {
        const part = uses.slice(i, i + USE_BATCH);
        const cases = part.map(() => `WHEN ? THEN ?${time}`).join(' ');
        await sequelize.query(`UPDATE sessions SET last_used_at = CASE id ${cases} END WHERE id IN (${part.map(() => '?').join(', ')})`, {
          replacements: [...part.flatMap((u) => [u.id, u.at]), ...part.map((u) => u.id)],
          type: QueryTypes.UPDATE,
        });
      }
    },
    async deleteWhere(where, opts) {
      const cond: Record<string | symbol, unknown> = {};
      if (where.id) cond.id = where.id;
      if (where.user_id) cond.user_id = where.user_id;
      if (where.exceptId) cond[Op.and] = [{ id: { [Op.ne]: where.exceptId } }];
      if (!where.id && !where.user_id) throw new Error('deleteWhere needs id or user_id');
      const found = await Session.findAll({ where: cond, attributes: ['id', 'token_hash'], transaction: opts?.tx ?? undefined });
      return deleteIds(
        found.map((m) => ({ id: m.get('id') as string, token_hash: m.get('token_hash') as string })),
        opts,
      );
    },
    async deleteExpired(now, batch) {
      // One statement per batch, its own transaction: row locks last one batch, and readers (MVCC on
      // PostgreSQL, WAL on SQLite) never wait. SKIP LOCKED lets two runners (or a revocation) pass each other.
      const lock = pg ? ' FOR UPDATE SKIP LOCKED' : '';
      // BULKDELETE: both dialects then answer the number of rows deleted.
      const n = await sequelize.query(
        `DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at < :now LIMIT ${Math.max(1, Math.floor(batch))}${lock})`,
        { replacements: { now }, type: QueryTypes.BULKDELETE },
      );
      return Number(n);
    },
    async countExpired(now) {
      return Session.count({ where: { expires_at: { [Op.lt]: now } } });
    },
    countActive(now) {
      return Session.count({ where: { status: 'active', expires_at: { [Op.gt]: now } } });
    },
    async countActiveCapped(now, cap) {
      if (!pg) return { total: await Session.count({ where: { status: 'active', expires_at: { [Op.gt]: now } } }), exact: true };
      const where = "status = 'active' AND expires_at > :now";
      // At most cap + 1 index entries of `sessions_expires_at` read, whatever the table's size.
      const [r] = await sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM sessions WHERE ${where} LIMIT ${Math.max(0, Math.floor(cap)) + 1}) s`, {
        type: QueryTypes.SELECT,
        replacements: { now },
      });
      const n = Number(r?.n ?? 0);
      if (n <= cap) return { total: n, exact: true };
      const [plan] = await sequelize.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(`EXPLAIN (FORMAT JSON) SELECT 1 FROM sessions WHERE ${where}`, {
        type: QueryTypes.SELECT,
        replacements: { now },
      });
      return { total: Math.max(Math.round(plan?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0), cap + 1), exact: false };
    },
  };
}
