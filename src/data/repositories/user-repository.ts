import { Op, type Model, type ModelStatic, type Sequelize, type Transaction, type WhereOptions } from 'sequelize';
import { canonicalEmail, type CoreUserValues } from '../models/user-columns.js';
import { defineUserModel, type UserFieldDef } from '../models/user.model.js';
import { createUserLister, type UserListQuery } from './user-list.js';

/** A users row as a plain object (module columns included when installed); core columns typed from user-columns.ts. */
export type UserRecord = CoreUserValues & { [moduleField: string]: unknown };

export { BadCursorError, USER_SORT_FIELDS, type UserListQuery } from './user-list.js';

/** One page of the admin list: the rows, the total (exact or the planner's estimate) and the next cursor. */
export interface UserListPage {
  rows: UserRecord[];
  total: number;
  totalExact: boolean;
  nextCursor: string | null;
}

/** What idsWhere can select on: the user's flags. */
export type UserFlagWhere = Partial<Pick<UserRecord, 'two_factor' | 'is_verified' | 'user_type'>>;

/** Repositories take an optional transaction: the unit of work a service opened. */
export interface TxOption {
  tx?: Transaction | null;
}

export interface UserRepository {
  findById(id: string, opts?: { includeDeleted?: boolean } & TxOption): Promise<UserRecord | null>;
  /** The users with these ids, in one query (missing ones left out, order not kept). */
  findByIds(ids: readonly string[], opts?: { includeDeleted?: boolean }): Promise<UserRecord[]>;
  findByEmail(email: string, opts?: { includeDeleted?: boolean }): Promise<UserRecord | null>;
  /** Email (case-insensitive) or user name (case-insensitive). */
  findByLogin(identifier: string): Promise<UserRecord | null>;
  findByPhone(phone: string): Promise<UserRecord | null>;
  userNameTaken(userName: string, exceptId?: string): Promise<boolean>;
  create(values: Partial<UserRecord> & { id: string; email: string }, opts?: TxOption): Promise<UserRecord>;
  /** The row `create` would return for `values` (the model's defaults filled in), not saved. */
  build(values: Partial<UserRecord> & { id: string; email: string }): UserRecord;
  update(id: string, values: Partial<UserRecord>, opts?: TxOption): Promise<UserRecord | null>;
  list(query: UserListQuery): Promise<UserListPage>;
  /** Builds the default admin listing's deep-page anchors ahead (PostgreSQL, large tables); true when it did. */
  warmList(): Promise<boolean>;
  count(where?: Partial<Pick<UserRecord, 'user_type'>>): Promise<number>;
  /** Ids of the live users matching `where` (e.g. everyone with two-factor on). */
  idsWhere(where: UserFlagWhere, opts?: TxOption): Promise<string[]>;
  /**
   * Reads or clears named columns whatever the model knows: a module uninstalled with its data kept
   * still has its columns, which its exporter and eraser must reach. Names are checked by the caller.
   */
  readColumns(id: string, columns: string[]): Promise<Record<string, unknown> | null>;
  clearColumns(id: string, columns: string[], opts?: TxOption): Promise<void>;
  /** Module columns known to the model (installed modules). */
  extraFields(): UserFieldDef[];
  setExtraFields(fields: UserFieldDef[]): void;
}

export function createUserRepository(sequelize: Sequelize): UserRepository {
  let extra: UserFieldDef[] = [];
  let User: ModelStatic<Model> = defineUserModel(sequelize, extra);
  const lister = createUserLister(sequelize);
  const row = (m: Model) => m.get({ plain: true }) as UserRecord;
  const plain = (m: Model | null) => (m ? row(m) : null);
  const quote = (c: string) => sequelize.getQueryInterface().quoteIdentifier(c);
  const notDeleted = (includeDeleted?: boolean): WhereOptions => (includeDeleted ? {} : { deleted_at: null });

  return {
    async findById(id, opts) {
      return plain(await User.findOne({ where: { id, ...notDeleted(opts?.includeDeleted) }, transaction: opts?.tx ?? undefined }));
    },
    async findByIds(ids, opts) {
      if (!ids.length) return [];
      const rows = await User.findAll({ where: { id: [...new Set(ids)], ...notDeleted(opts?.includeDeleted) } });
      return rows.map(row);
    },
    async findByEmail(email, opts) {
      return plain(await User.findOne({ where: { email: canonicalEmail(email), ...notDeleted(opts?.includeDeleted) } }));
    },
    async findByLogin(identifier) {
      const id = identifier.trim().toLowerCase();
      if (id.includes('@')) return plain(await User.findOne({ where: { email: id, deleted_at: null } }));
      return plain(
        await User.findOne({
          where: { deleted_at: null, [Op.and]: [sequelize.where(sequelize.fn('lower', sequelize.col('user_name')), id)] },
        }),
      );
    },
    async findByPhone(phone) {
      return plain(await User.findOne({ where: { phone, deleted_at: null } }));
    },
    async userNameTaken(userName, exceptId) {
      const where: WhereOptions = {
        [Op.and]: [sequelize.where(sequelize.fn('lower', sequelize.col('user_name')), userName.trim().toLowerCase())],
        ...(exceptId ? { id: { [Op.ne]: exceptId } } : {}),
      };
      return (await User.count({ where })) > 0;
    },
    async create(values, opts) {
      const now = new Date();
      const created = await User.create(
        { created_at: now, updated_at: now, ...values, email: canonicalEmail(values.email) },
        { transaction: opts?.tx ?? undefined },
      );
      return row(created);
    },
    build(values) {
      const now = new Date();
      return row(User.build({ created_at: now, updated_at: now, ...values, email: canonicalEmail(values.email) }));
    },
    async update(id, values, opts) {
      const transaction = opts?.tx ?? undefined;
      const [n] = await User.update({ ...values, updated_at: new Date() }, { where: { id }, transaction });
      if (!n) return null;
      return plain(await User.findOne({ where: { id }, transaction }));
    },
    async list(query) {
      const { ids, ...page } = await lister.page(query);
      const found = ids.length ? await User.findAll({ where: { id: ids } }) : [];
      const byId = new Map(found.map((m) => [m.get('id') as string, row(m)]));
      return { rows: ids.map((id) => byId.get(id)).filter((u): u is UserRecord => u !== undefined), ...page };
    },
    warmList: () => lister.warm(),
    async count(where) {
      return User.count({ where: { deleted_at: null, ...(where ?? {}) } });
    },
    async idsWhere(where, opts) {
      const rows = await User.findAll({ attributes: ['id'], where: { deleted_at: null, ...where }, transaction: opts?.tx ?? undefined });
      return rows.map((m) => m.get('id') as string);
    },
    async readColumns(id, columns) {
      if (!columns.length) return {};
      const [rows] = await sequelize.query(`SELECT ${columns.map((c) => quote(c)).join(', ')} FROM users WHERE id = ?`, { replacements: [id] });
      return (rows as Record<string, unknown>[])[0] ?? null;
    },
    async clearColumns(id, columns, opts) {
      if (!columns.length) return;
      await sequelize.query(`UPDATE users SET ${columns.map((c) => `${quote(c)} = NULL`).join(', ')}, updated_at = ? WHERE id = ?`, {
        replacements: [new Date(), id],
        transaction: opts?.tx ?? undefined,
      });
    },
    extraFields: () => extra,
    setExtraFields(fields) {
      extra = [...fields];
      User = defineUserModel(sequelize, extra);
    },
  };
}
