import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

export const createSessions: MigrationDef = {
  name: '20261121-0901-create-sessions',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'sessions',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        // SHA-256 of the token; the token itself is never stored.
        token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
        session_prefix: { type: DataTypes.STRING(16), allowNull: false },
        user_id: {
          type: DataTypes.STRING(36),
          allowNull: false,
          references: { model: 'users', key: 'id' },
          onDelete: 'CASCADE',
        },
        status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'active' },
        ip_address: { type: DataTypes.STRING(64), allowNull: true },
        user_agent: { type: DataTypes.STRING(512), allowNull: true },
        user_device: { type: DataTypes.STRING(100), allowNull: true },
        two_factor_verified: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        created_at: { type: DataTypes.DATE, allowNull: false },
        last_used_at: { type: DataTypes.DATE, allowNull: false },
        expires_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
    await qi.addIndex('sessions', ['user_id'], { name: 'sessions_user_id', transaction });
    await qi.addIndex('sessions', ['expires_at'], { name: 'sessions_expires_at', transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('sessions', { transaction });
  },
};
