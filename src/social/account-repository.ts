import { randomUUID } from 'node:crypto';
import { DataTypes, type Model, type ModelStatic, type Sequelize, type Transaction } from 'sequelize';

/** One row of user_accounts (provider tokens sealed, never clear). */
export interface LinkedAccountRecord {
  id: string;
  user_id: string;
  provider: string;
  provider_user_id: string;
  provider_email: string | null;
  provider_name: string | null;
  provider_picture: string | null;
  access_token: string | null;
  refresh_token: string | null;
  token_expires_at: Date | null;
  linked_at: Date;
  last_updated: Date;
  metadata: Record<string, unknown> | null;
}

export type NewLinkedAccount = Omit<LinkedAccountRecord, 'id' | 'linked_at' | 'last_updated'>;

function defineModel(sequelize: Sequelize): ModelStatic<Model> {
  return (
    sequelize.models.UserAccount ??
    sequelize.define(
      'UserAccount',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        user_id: { type: DataTypes.STRING(36), allowNull: false },
        provider: { type: DataTypes.STRING(32), allowNull: false },
        provider_user_id: { type: DataTypes.STRING(255), allowNull: false },
        provider_email: DataTypes.STRING(254),
        provider_name: DataTypes.STRING(255),
        provider_picture: DataTypes.STRING(2000),
        access_token: DataTypes.TEXT,
        refresh_token: DataTypes.TEXT,
        token_expires_at: DataTypes.DATE,
        linked_at: { type: DataTypes.DATE, allowNull: false },
        last_updated: { type: DataTypes.DATE, allowNull: false },
        metadata: DataTypes.JSON,
      },
      { tableName: 'user_accounts', timestamps: false },
    )
  );
}

const clip = (v: string | null, n: number) => (v === null ? null : v.slice(0, n));

export function createAccountRepository(sequelize: Sequelize) {
  const Account = defineModel(sequelize);
  const row = (m: Model) => m.get({ plain: true }) as LinkedAccountRecord;
  const plain = (m: Model | null) => (m ? row(m) : null);
  const t = (transaction?: Transaction) => (transaction ? { transaction } : {});

  return {
    async find(provider: string, providerUserId: string, transaction?: Transaction) {
      return plain(await Account.findOne({ where: { provider, provider_user_id: providerUserId }, ...t(transaction) }));
    },
    async findForUser(userId: string, provider: string, transaction?: Transaction) {
      return plain(await Account.findOne({ where: { user_id: userId, provider }, ...t(transaction) }));
    },
    /** `lock`: rows locked for update until the transaction ends (PostgreSQL). */
    async listForUser(userId: string, transaction?: Transaction, lock = false) {
      const rows = await Account.findAll({
        where: { user_id: userId },
        order: [['linked_at', 'ASC']],
        ...t(transaction),
        ...(lock && transaction ? { lock: transaction.LOCK.UPDATE } : {}),
      });
      return rows.map(row);
    },
    async create(values: NewLinkedAccount, now: Date, transaction?: Transaction) {
      const created = await Account.create(
        {
          ...values,
          id: randomUUID(),
          provider_email: clip(values.provider_email, 254),
          provider_name: clip(values.provider_name, 255),
          provider_picture: clip(values.provider_picture, 2000),
          linked_at: now,
          last_updated: now,
        },
        t(transaction),
      );
      return row(created);
    },
    /** The provider's latest view of the profile (and tokens, when kept). */
    async refresh(id: string, values: Partial<NewLinkedAccount>, now: Date, transaction?: Transaction) {
      const patch: Record<string, unknown> = { ...values, last_updated: now };
      for (const [k, n] of [
        ['provider_email', 254],
        ['provider_name', 255],
        ['provider_picture', 2000],
      ] as const) {
        if (typeof patch[k] === 'string') patch[k] = clip(patch[k], n);
      }
      await Account.update(patch, { where: { id }, ...t(transaction) });
    },
    async remove(id: string, transaction?: Transaction) {
      return Account.destroy({ where: { id }, ...t(transaction) });
    },
  };
}

export type AccountRepository = ReturnType<typeof createAccountRepository>;
