import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

const id = { type: DataTypes.STRING(36), primaryKey: true };
const userRef = { type: DataTypes.STRING(36), allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' };
const methodRef = { type: DataTypes.STRING(36), allowNull: false, references: { model: 'two_factor_methods', key: 'id' }, onDelete: 'CASCADE' };
const when = (allowNull: boolean) => ({ type: DataTypes.DATE, allowNull });

export const TABLES = ['two_factor_methods', 'two_factor_challenges', 'two_factor_backup_codes', 'two_factor_trusted_devices'];

/**
 * Methods (email, sms, totp, backup_codes), the codes sent for them (keyed hashes), backup codes
 * (keyed hashes) and trusted devices (keyed hashes of their tokens). TOTP secrets are stored
 * encrypted (AES-256-GCM), never in clear.
 */
export const createTwoFactorTables: MigrationDef = {
  name: '20261124-2000-create-two-factor-tables',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'two_factor_methods',
      {
        id,
        user_id: userRef,
        kind: { type: DataTypes.STRING(16), allowNull: false },
        status: { type: DataTypes.STRING(16), allowNull: false },
        identifier: { type: DataTypes.STRING(254), allowNull: true },
        secret_enc: { type: DataTypes.TEXT, allowNull: true },
        // The last TOTP time step accepted: a code is never accepted twice.
        last_step: { type: DataTypes.BIGINT, allowNull: true },
        created_at: when(false),
        verified_at: when(true),
        last_used_at: when(true),
      },
      { transaction },
    );
    await qi.addIndex('two_factor_methods', ['user_id'], { name: 'two_factor_methods_user', transaction });
    await qi.createTable(
      'two_factor_challenges',
      {
        id,
        user_id: userRef,
        method_id: methodRef,
        session_id: { type: DataTypes.STRING(36), allowNull: true },
        purpose: { type: DataTypes.STRING(16), allowNull: false },
        code_hash: { type: DataTypes.STRING(64), allowNull: false },
        attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        created_at: when(false),
        expires_at: when(false),
        used_at: when(true),
      },
      { transaction },
    );
    await qi.addIndex('two_factor_challenges', ['method_id'], { name: 'two_factor_challenges_method', transaction });
    await qi.addIndex('two_factor_challenges', ['user_id'], { name: 'two_factor_challenges_user', transaction });
    await qi.createTable(
      'two_factor_backup_codes',
      {
        id,
        user_id: userRef,
        method_id: methodRef,
        code_hash: { type: DataTypes.STRING(64), allowNull: false },
        created_at: when(false),
        used_at: when(true),
      },
      { transaction },
    );
    await qi.addIndex('two_factor_backup_codes', ['method_id', 'code_hash'], { name: 'two_factor_backup_codes_lookup', transaction });
    await qi.addIndex('two_factor_backup_codes', ['user_id'], { name: 'two_factor_backup_codes_user', transaction });
    await qi.createTable(
      'two_factor_trusted_devices',
      {
        id,
        user_id: userRef,
        token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
        user_agent: { type: DataTypes.STRING(255), allowNull: true },
        created_at: when(false),
        expires_at: when(false),
        last_used_at: when(true),
      },
      { transaction },
    );
    await qi.addIndex('two_factor_trusted_devices', ['user_id'], { name: 'two_factor_trusted_devices_user', transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    for (const t of [...TABLES].reverse()) await qi.dropTable(t, { transaction });
  },
};
