import { DataTypes, Model, type ModelAttributes, type ModelStatic, type Sequelize } from 'sequelize';
import type { z } from 'zod';
import { USER_COLUMNS, type UserColumn } from './user-columns.js';

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

const dataType = (c: UserColumn) =>
  c.type === 'string'
    ? DataTypes.STRING(c.length)
    : c.type === 'boolean'
      ? DataTypes.BOOLEAN
      : c.type === 'date'
        ? DataTypes.DATE
        : c.type === 'dateonly'
          ? DataTypes.DATEONLY
          : DataTypes.JSON;

/** The core columns as model attributes, from their one declaration (user-columns.ts). */
export const CORE_USER_ATTRIBUTES: ModelAttributes = Object.fromEntries(
  Object.entries(USER_COLUMNS as Record<string, UserColumn>).map(([name, c]) => [
    name,
    {
      type: dataType(c),
      ...(c.primaryKey ? { primaryKey: true } : {}),
      ...(c.required ? { allowNull: false } : {}),
      ...(c.defaultValue !== undefined ? { defaultValue: c.defaultValue } : {}),
    },
  ]),
);

const typeOf = (f: UserFieldDef) =>
  f.type === 'boolean' ? DataTypes.BOOLEAN : f.type === 'date' ? DataTypes.DATE : f.type === 'integer' ? DataTypes.INTEGER : DataTypes.STRING(f.length ?? 255);

/** (Re)defines the User model with the core columns plus the columns of installed modules. */
export function defineUserModel(sequelize: Sequelize, extra: UserFieldDef[] = []): ModelStatic<Model> {
  const attrs: ModelAttributes = { ...CORE_USER_ATTRIBUTES };
  for (const f of extra) attrs[f.name] = { type: typeOf(f), allowNull: true };
  return sequelize.define('User', attrs, { tableName: 'users', timestamps: false });
}
