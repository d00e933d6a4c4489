import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

export const createUsers: MigrationDef = {
  name: '20261121-0900-create-users',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'users',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        email: { type: DataTypes.STRING(254), allowNull: false, unique: true },
        name: { type: DataTypes.STRING(100), allowNull: true },
        last_name: { type: DataTypes.STRING(100), allowNull: true },
        user_name: { type: DataTypes.STRING(50), allowNull: true },
        user_type: { type: DataTypes.STRING(20), allowNull: false, defaultValue: 'customer' },
        picture: { type: DataTypes.STRING(500), allowNull: true },
        phone: { type: DataTypes.STRING(32), allowNull: true },
        is_verified: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        two_factor: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        lang: { type: DataTypes.STRING(16), allowNull: true },
        metadata: { type: DataTypes.JSON, allowNull: true },
        tmz: { type: DataTypes.STRING(64), allowNull: true },
        dob: { type: DataTypes.DATEONLY, allowNull: true },
        display_name: { type: DataTypes.STRING(100), allowNull: true },
        gender: { type: DataTypes.STRING(32), allowNull: true },
        title: { type: DataTypes.STRING(100), allowNull: true },
        first_time: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        reference_id: { type: DataTypes.STRING(100), allowNull: true },
        recovery_email: { type: DataTypes.STRING(254), allowNull: true },
        password_hash: { type: DataTypes.STRING(100), allowNull: true },
        password_changed_at: { type: DataTypes.DATE, allowNull: true },
        disabled_at: { type: DataTypes.DATE, allowNull: true },
        deleted_at: { type: DataTypes.DATE, allowNull: true },
        deletion_reason: { type: DataTypes.STRING(500), allowNull: true },
        created_at: { type: DataTypes.DATE, allowNull: false },
        updated_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
    // User names are unique regardless of case; the display spelling is kept as given.
    await qi.sequelize.query('CREATE UNIQUE INDEX users_user_name_lower ON users (lower(user_name))', { transaction });
    await qi.addIndex('users', ['user_type'], { name: 'users_user_type', transaction });
    await qi.addIndex('users', ['created_at'], { name: 'users_created_at', transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('users', { transaction });
  },
};
