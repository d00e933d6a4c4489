import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/**
 * What a session's sign-in proved, as RFC 8176 `amr` values (space-separated), written by the sign-in seam
 * (src/services/sign-in-amr.ts) and read by the OpenID provider: one owner, no second computation. Null
 * for sessions from before.
 */
export const addSessionAmr: MigrationDef = {
  name: '20261207-1010-add-session-amr',
  async up({ queryInterface: qi, transaction }) {
    await qi.addColumn('sessions', 'amr', { type: DataTypes.STRING(100), allowNull: true }, { transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    // Raw DROP COLUMN: removeColumn rebuilds the table on SQLite (docs/modules.md).
    await qi.sequelize.query('ALTER TABLE sessions DROP COLUMN amr', { transaction });
  },
};
