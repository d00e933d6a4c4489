import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/**
 * Social login: the provider accounts linked to a user. One account per (provider, provider user id)
 * and at most one per provider for a user. Provider tokens are kept only when configured, and then
 * sealed (AES-256-GCM, src/social/crypto.ts), never in clear.
 */
export const createUserAccounts: MigrationDef = {
  name: '20261124-2000-create-user-accounts',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'user_accounts',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        user_id: { type: DataTypes.STRING(36), allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
        provider: { type: DataTypes.STRING(32), allowNull: false },
        provider_user_id: { type: DataTypes.STRING(255), allowNull: false },
        provider_email: { type: DataTypes.STRING(254), allowNull: true },
        provider_name: { type: DataTypes.STRING(255), allowNull: true },
        provider_picture: { type: DataTypes.STRING(2000), allowNull: true },
        access_token: { type: DataTypes.TEXT, allowNull: true },
        refresh_token: { type: DataTypes.TEXT, allowNull: true },
        token_expires_at: { type: DataTypes.DATE, allowNull: true },
        linked_at: { type: DataTypes.DATE, allowNull: false },
        last_updated: { type: DataTypes.DATE, allowNull: false },
        metadata: { type: DataTypes.JSON, allowNull: true },
      },
      { transaction },
    );
    await qi.addIndex('user_accounts', ['provider', 'provider_user_id'], { name: 'user_accounts_provider_user', unique: true, transaction });
    await qi.addIndex('user_accounts', ['user_id', 'provider'], { name: 'user_accounts_user_provider', unique: true, transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('user_accounts', { transaction });
  },
};
