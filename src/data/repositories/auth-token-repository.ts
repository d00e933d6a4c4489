import { Op, type Model, type ModelStatic, type Transaction } from 'sequelize';

/** One row of auth_tokens: a one-time token (verify, reset, login), stored as hashes only. */
export interface AuthTokenRecord {
  id: string;
  kind: string;
  user_id: string | null;
  token_hash: string;
  code_hash: string | null;
  channel: string | null;
  identifier: string | null;
  attempts: number;
  meta: Record<string, unknown> | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

/**
 * The one reader and writer of auth_tokens, built once (app.repos.authTokens): the account flows,
 * social sign-in's started flows, the cleanup job and erasure all go through it.
 */
export interface AuthTokenRepository {
  create(rec: Omit<AuthTokenRecord, 'attempts' | 'used_at'>): Promise<AuthTokenRecord>;
  findByHash(tokenHash: string): Promise<AuthTokenRecord | null>;
  findById(id: string): Promise<AuthTokenRecord | null>;
  /** The newest unused, unexpired token of a kind for an identifier. */
  findLatestActive(kind: string, identifier: string, now: Date): Promise<AuthTokenRecord | null>;
  /** Marks a token used; false when it already was (so only one caller ever wins). */
  markUsed(id: string, now: Date): Promise<boolean>;
  /**
   * Voids the unused tokens of `where` (voidActive) and writes `rec`, in one transaction that holds a
   * lock on `where` (PostgreSQL: an advisory lock; SQLite: the write lock), so two instances issuing at
   * once cannot both leave a live token: the second to commit voids the first's.
   */
  replaceActive(where: { kind: string; identifier?: string; userId?: string }, rec: Omit<AuthTokenRecord, 'attempts' | 'used_at'>): Promise<AuthTokenRecord>;
  /** Marks every unused token of a kind for an identifier (or user) used; returns how many. */
  voidActive(where: { kind: string; identifier?: string; userId?: string }, now: Date): Promise<number>;
  /** Counts one code attempt unless the token is used or out of attempts; false when refused. */
  addAttempt(id: string, maxAttempts: number): Promise<boolean>;
  /**
   * The write addAttempt makes, on a row that is never a live token: what a wrong code for an
   * unknown token costs, so the two cannot be told apart by time.
   */
  decoyAttempt(): Promise<void>;
  /** A user's tokens, newest first (the personal-data export). */
  listByUser(userId: string): Promise<AuthTokenRecord[]>;
  /** Deletes a user's tokens, inside `tx` when given (erasure); returns how many. */
  deleteByUser(userId: string, opts?: { tx?: Transaction | null }): Promise<number>;
  /** Deletes the tokens that can no longer be used, expired by `now` or used (the cleanup job); returns how many. */
  deleteSpent(now: Date): Promise<number>;
}

/** A used, long-expired row with no user: the target of decoyAttempt. Token cleanup may delete it; it comes back. */
const DECOY_ID = '00000000-0000-4000-8000-000000000000';

const toDate = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const toDateOrNull = (v: unknown) => (v === null || v === undefined ? null : toDate(v));

export function createAuthTokenRepository(AuthToken: ModelStatic<Model>): AuthTokenRepository {
  const row = (m: Model): AuthTokenRecord => {
    const r = m.get({ plain: true }) as AuthTokenRecord;
    // SQLite hands back strings for some dates depending on how they were written; callers compare times.
    return { ...r, created_at: toDate(r.created_at), expires_at: toDate(r.expires_at), used_at: toDateOrNull(r.used_at) };
  };
  const plain = (m: Model | null) => (m ? row(m) : null);

  const sequelize = AuthToken.sequelize;
  if (!sequelize) throw new Error('createAuthTokenRepository needs a model defined on a Sequelize instance');
  const voidWhere = (where: { kind: string; identifier?: string; userId?: string }, now: Date, transaction?: Transaction) => {
    if (where.identifier === undefined && where.userId === undefined) throw new Error('voidActive needs an identifier or a user id');
    const w: Record<string, unknown> = { kind: where.kind, used_at: null };
    if (where.identifier !== undefined) w.identifier = where.identifier;
    if (where.userId !== undefined) w.user_id = where.userId;
    return AuthToken.update({ used_at: now }, { where: w, transaction });
  };

  return {
    async create(rec) {
      return row(await AuthToken.create({ ...rec, attempts: 0, used_at: null }));
    },
    replaceActive(where, rec) {
      const lockKey = `auth_tokens:${where.kind}:${where.identifier !== undefined ? `id:${where.identifier}` : `user:${where.userId}`}`;
      return sequelize.transaction(async (transaction) => {
        // Under READ COMMITTED the void below cannot see a token another transaction has not committed
        // yet: the lock makes the second issuer wait for the first, then void its token.
        if (sequelize.getDialect() === 'postgres') {
          await sequelize.query('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', { replacements: [lockKey], transaction });
        }
        await voidWhere(where, rec.created_at, transaction);
        return row(await AuthToken.create({ ...rec, attempts: 0, used_at: null }, { transaction }));
      });
    },
    async findByHash(tokenHash) {
      return plain(await AuthToken.findOne({ where: { token_hash: tokenHash } }));
    },
    async findById(id) {
      return plain(await AuthToken.findOne({ where: { id } }));
    },
    async findLatestActive(kind, identifier, now) {
      return plain(
        await AuthToken.findOne({
          where: { kind, identifier, used_at: null, expires_at: { [Op.gt]: now } },
          order: [['created_at', 'DESC']],
        }),
      );
    },
    async markUsed(id, now) {
      const [n] = await AuthToken.update({ used_at: now }, { where: { id, used_at: null } });
      return n === 1;
    },
    async voidActive(where, now) {
      const [n] = await voidWhere(where, now);
      return n;
    },
    async addAttempt(id, maxAttempts) {
      const [n] = await AuthToken.update(
        { attempts: sequelize.literal('attempts + 1') },
        { where: { id, used_at: null, attempts: { [Op.lt]: maxAttempts } } },
      );
      return n === 1;
    },
    async decoyAttempt() {
      const [n] = await AuthToken.update({ attempts: sequelize.literal('(attempts + 1) % 1000') }, { where: { id: DECOY_ID } });
      if (n === 1) return;
      const epoch = new Date(0);
      await AuthToken.findOrCreate({
        where: { id: DECOY_ID },
        defaults: { id: DECOY_ID, kind: 'decoy', user_id: null, token_hash: DECOY_ID, code_hash: null, channel: null, identifier: null, attempts: 0, meta: null, created_at: epoch, expires_at: epoch, used_at: epoch },
      }).catch(() => undefined);
    },
    async listByUser(userId) {
      const rows = await AuthToken.findAll({ where: { user_id: userId }, order: [['created_at', 'DESC']] });
      return rows.map(row);
    },
    deleteByUser: (userId, opts) => AuthToken.destroy({ where: { user_id: userId }, transaction: opts?.tx ?? undefined }),
    deleteSpent: (now) => AuthToken.destroy({ where: { [Op.or]: [{ expires_at: { [Op.lt]: now } }, { used_at: { [Op.ne]: null } }] } }),
  };
}
