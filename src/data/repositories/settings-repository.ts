import { Op, type Model, type ModelStatic, type Transaction } from 'sequelize';
import { isUniqueViolation } from '../db-errors.js';

/** One row of settings: a key and its JSON value (a string on SQLite when the driver does not parse it). */
export interface SettingRecord {
  key: string;
  value: unknown;
  updated_at: Date;
}

interface TxOption {
  tx?: Transaction | null;
}

/**
 * The one reader and writer of settings, built once (app.repos.settings): the module hub's state
 * (settings, revision), its install lock and the migration lock go through it.
 */
export interface SettingsRepository {
  get(key: string, opts?: TxOption): Promise<SettingRecord | null>;
  getMany(keys: readonly string[]): Promise<SettingRecord[]>;
  /** Writes the value, creating the row or replacing it. */
  put(key: string, value: unknown, opts?: TxOption): Promise<void>;
  /** Creates the row unless the key exists (a lock taken): false when another writer holds it. */
  claim(key: string, value: unknown): Promise<boolean>;
  /** Deletes the row (only when `olderThan` is given and it was written before); true when one went. */
  remove(key: string, opts?: TxOption & { olderThan?: Date }): Promise<boolean>;
  /** Deletes the row when its current value passes `test` (a lock released only by its holder). */
  removeIf(key: string, test: (value: unknown) => boolean): Promise<boolean>;
}

const toDate = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));

export function createSettingsRepository(Setting: ModelStatic<Model>): SettingsRepository {
  const row = (m: Model): SettingRecord => {
    const r = m.get({ plain: true }) as SettingRecord;
    return { key: r.key, value: r.value, updated_at: toDate(r.updated_at) };
  };
  const plain = (m: Model | null) => (m ? row(m) : null);
  return {
    async get(key, opts) {
      return plain(await Setting.findByPk(key, { transaction: opts?.tx ?? undefined }));
    },
    async getMany(keys) {
      if (!keys.length) return [];
      return (await Setting.findAll({ where: { key: [...keys] } })).map(row);
    },
    async put(key, value, opts) {
      await Setting.upsert({ key, value, updated_at: new Date() }, { transaction: opts?.tx ?? undefined });
    },
    async claim(key, value) {
      try {
        await Setting.create({ key, value, updated_at: new Date() });
        return true;
      } catch (err) {
        if (isUniqueViolation(err)) return false;
        throw err;
      }
    },
    async remove(key, opts = {}) {
      const where = opts.olderThan ? { key, updated_at: { [Op.lt]: opts.olderThan } } : { key };
      return (await Setting.destroy({ where, transaction: opts.tx ?? undefined })) > 0;
    },
    async removeIf(key, test) {
      const row = await Setting.findByPk(key);
      if (!row || !test(row.get('value'))) return false;
      await row.destroy();
      return true;
    },
  };
}
