import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

const COLUMNS = {
  is_business: DataTypes.BOOLEAN,
  biz_name: DataTypes.STRING(200),
  biz_country: DataTypes.STRING(2),
  biz_state: DataTypes.STRING(100),
  biz_position: DataTypes.STRING(100),
  biz_postal_code: DataTypes.STRING(20),
};

/** Business columns on users, all nullable: existing users simply have none. */
export const addBusinessColumns: MigrationDef = {
  name: '20261121-1000-add-business-columns',
  async up({ queryInterface: qi, transaction }) {
    for (const [name, type] of Object.entries(COLUMNS)) {
      await qi.addColumn('users', name, { type, allowNull: true }, { transaction });
    }
  },
  async down({ sequelize, transaction }) {
    // Raw DROP COLUMN: Sequelize's SQLite removeColumn rebuilds the table, and with foreign keys on
    // that cascades into sessions.
    for (const name of Object.keys(COLUMNS).reverse()) {
      await sequelize.query(`ALTER TABLE users DROP COLUMN ${name}`, { transaction });
    }
  },
};
