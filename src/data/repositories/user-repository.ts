import { Op, type Model, type ModelStatic, type Sequelize, type WhereOptions } from 'sequelize';
import { defineUserModel, type UserFieldDef } from '../models/user.model.js';
import { dialectOf } from '../sequelize.js';

/** A users row as a plain object (module columns included when installed). */
export interface UserRecord {
  id: string;
  email: string;
  name: string | null;
  last_name: string | null;
  user_name: string | null;
  user_type: string;
  picture: string | null;
  phone: string | null;
  is_verified: boolean;
  two_factor: boolean;
  lang: string | null;
  metadata: Record<string, unknown> | null;
  tmz: string | null;
  dob: string | null;
  display_name: string | null;
  gender: string | null;
  title: string | null;
  first_time: boolean;
  reference_id: string | null;
  recovery_email: string | null;
  password_hash: string | null;
  password_changed_at: Date | null;
  disabled_at: Date | null;
  deleted_at: Date | null;
  deletion_reason: string | null;
  created_at: Date;
  updated_at: Date;
  [moduleField: string]: unknown;
}

export const USER_SORT_FIELDS = ['created_at', 'updated_at', 'email', 'name', 'last_name', 'user_name', 'user_type'] as const;

export interface UserListQuery {
  q?: string;
  user_type?: string;
  is_verified?: boolean;
  includeDeleted?: boolean;
  sortBy?: (typeof USER_SORT_FIELDS)[number];
  sortOrder?: 'asc' | 'desc';
  page: number;
  limit: number;
}

export interface UserRepository {
  findById(id: string, opts?: { includeDeleted?: boolean }): Promise<UserRecord | null>;
  findByEmail(email: string, opts?: { includeDeleted?: boolean }): Promise<UserRecord | null>;
  /** Email (case-insensitive) or user name (case-insensitive). */
  findByLogin(identifier: string): Promise<UserRecord | null>;
  findByPhone(phone: string): Promise<UserRecord | null>;
  userNameTaken(userName: string, exceptId?: string): Promise<boolean>;
  create(values: Partial<UserRecord> & { id: string; email: string }): Promise<UserRecord>;
  update(id: string, values: Partial<UserRecord>): Promise<UserRecord | null>;
  list(query: UserListQuery): Promise<{ rows: UserRecord[]; total: number }>;
  count(where?: Partial<Pick<UserRecord, 'user_type'>>): Promise<number>;
  /** Module columns known to the model (installed modules). */
  extraFields(): UserFieldDef[];
  setExtraFields(fields: UserFieldDef[]): void;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export function createUserRepository(sequelize: Sequelize): UserRepository {
  let extra: UserFieldDef[] = [];
  let User: ModelStatic<Model> = defineUserModel(sequelize, extra);
  const like = dialectOf(sequelize) === 'postgres' ? 'ILIKE' : 'LIKE';
  const qi = sequelize.getQueryInterface();
  // An explicit ESCAPE: SQLite has no default escape character, so a search for "50%" or "a_b"
  // would otherwise match far more than it names.
  const contains = (column: string, pattern: string) =>
    sequelize.literal(`${qi.quoteIdentifier(column)} ${like} ${sequelize.escape(pattern)} ESCAPE '\\'`);
  const plain = (m: Model | null) => (m ? (m.get({ plain: true }) as UserRecord) : null);
  const notDeleted = (includeDeleted?: boolean): WhereOptions => (includeDeleted ? {} : { deleted_at: null });

  return {
    async findById(id, opts) {
      return plain(await User.findOne({ where: { id, ...notDeleted(opts?.includeDeleted) } }));
    },
    async findByEmail(email, opts) {
      return plain(await User.findOne({ where: { email: email.trim().toLowerCase(), ...notDeleted(opts?.includeDeleted) } }));
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
    async create(values) {
      const now = new Date();
      const row = await User.create({ created_at: now, updated_at: now, ...values, email: values.email.toLowerCase() });
      return plain(row)!;
    },
    async update(id, values) {
      const [n] = await User.update({ ...values, updated_at: new Date() }, { where: { id } });
      if (!n) return null;
      return plain(await User.findOne({ where: { id } }));
    },
    async list(query) {
      const where: WhereOptions[] = [notDeleted(query.includeDeleted)];
      if (query.q) {
        const pattern = `%${escapeLike(query.q.trim())}%`;
        where.push({ [Op.or]: ['email', 'name', 'last_name', 'user_name'].map((c) => contains(c, pattern)) });
      }
      if (query.user_type) where.push({ user_type: query.user_type });
      if (query.is_verified !== undefined) where.push({ is_verified: query.is_verified });
      const { rows, count } = await User.findAndCountAll({
        where: { [Op.and]: where },
        order: [[query.sortBy ?? 'created_at', (query.sortOrder ?? 'desc').toUpperCase()], ['id', 'ASC']],
        limit: query.limit,
        offset: (query.page - 1) * query.limit,
      });
      return { rows: rows.map((r) => plain(r)!), total: count };
    },
    async count(where) {
      return User.count({ where: { deleted_at: null, ...(where ?? {}) } });
    },
    extraFields: () => extra,
    setExtraFields(fields) {
      extra = [...fields];
      User = defineUserModel(sequelize, extra);
    },
  };
}
