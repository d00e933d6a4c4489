import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/**
 * When a generated initial password stops working (ASVS 5.0 6.4.1): `init` and `user create` set it 24
 * hours ahead when they make the password up; any password set afterwards clears it. Null for every
 * other password, and for every user from before.
 */
export const addUserPasswordExpiresAt: MigrationDef = {
  name: '20261207-2345-add-user-password-expires-at',
  async up({ queryInterface: qi, transaction }) {
    await qi.addColumn('users', 'password_expires_at', { type: DataTypes.DATE, allowNull: true }, { transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    // Raw DROP COLUMN: removeColumn rebuilds the table on SQLite (docs/modules.md).
    await qi.sequelize.query('ALTER TABLE users DROP COLUMN password_expires_at', { transaction });
  },
};
