import { DataTypes, Model, type ModelAttributes, type ModelStatic, type Sequelize } from 'sequelize';
import type { z } from 'zod';

/** A column a module adds to `users`. */
export interface UserFieldDef {
  name: string;
  type: 'string' | 'boolean' | 'date' | 'integer';
  /** Max length for strings. */
  length?: number;
  module: string;
  /** Accepted on write, never returned by any read. */
  writeOnly?: boolean;
  /**
   * Validates a write through PUT /auth/user/me. Present only on fields the profile update accepts;
   * fields without one are written by their module's own routes.
   */
  schema?: z.ZodType;
  /**
   * The refusal a profile update gets for this field. Without a schema: always (the module's own
   * routes write it). With one: while the module is not installed. `{field}` is the field's name.
   */
  refusal?: string;
  description?: string;
}

export const CORE_USER_ATTRIBUTES: ModelAttributes = {
  id: { type: DataTypes.STRING(36), primaryKey: true },
  email: { type: DataTypes.STRING(254), allowNull: false },
  name: DataTypes.STRING(100),
  last_name: DataTypes.STRING(100),
  user_name: DataTypes.STRING(50),
  user_type: { type: DataTypes.STRING(20), allowNull: false, defaultValue: 'customer' },
  picture: DataTypes.STRING(500),
  phone: DataTypes.STRING(32),
  is_verified: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
  two_factor: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
  lang: DataTypes.STRING(16),
  metadata: DataTypes.JSON,
  tmz: DataTypes.STRING(64),
  dob: DataTypes.DATEONLY,
  display_name: DataTypes.STRING(100),
  gender: DataTypes.STRING(32),
  title: DataTypes.STRING(100),
  first_time: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
  reference_id: DataTypes.STRING(100),
  recovery_email: DataTypes.STRING(254),
  password_hash: DataTypes.STRING(100),
  password_changed_at: DataTypes.DATE,
  disabled_at: DataTypes.DATE,
  deleted_at: DataTypes.DATE,
  deletion_reason: DataTypes.STRING(500),
  created_at: { type: DataTypes.DATE, allowNull: false },
  updated_at: { type: DataTypes.DATE, allowNull: false },
};

const typeOf = (f: UserFieldDef) =>
  f.type === 'boolean' ? DataTypes.BOOLEAN : f.type === 'date' ? DataTypes.DATE : f.type === 'integer' ? DataTypes.INTEGER : DataTypes.STRING(f.length ?? 255);

/** (Re)defines the User model with the core columns plus the columns of installed modules. */
export function defineUserModel(sequelize: Sequelize, extra: UserFieldDef[] = []): ModelStatic<Model> {
  const attrs: ModelAttributes = { ...CORE_USER_ATTRIBUTES };
  for (const f of extra) attrs[f.name] = { type: typeOf(f), allowNull: true };
  return sequelize.define('User', attrs, { tableName: 'users', timestamps: false });
}
