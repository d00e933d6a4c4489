import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/** The client's own device id, when it sends one at login; strict bridge validation compares it. */
export const addSessionDeviceId: MigrationDef = {
  name: '20261121-0903-add-session-device-id',
  async up({ queryInterface: qi, transaction }) {
    await qi.addColumn('sessions', 'device_id', { type: DataTypes.STRING(128), allowNull: true }, { transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    // Raw DROP COLUMN: Sequelize's SQLite removeColumn rebuilds the table.
    await qi.sequelize.query('ALTER TABLE sessions DROP COLUMN device_id', { transaction });
  },
};
