import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/**
 * When a session's sign-in took place: SESSION_MAX_LIFETIME counts from it. created_at cannot serve,
 * a password change re-stamps it (session-service.ts restamp). Null for sessions from before: their
 * lifetime counts from created_at, and a re-stamp writes the column. No backfill: an instance of the
 * build before, during a rolling upgrade, writes sessions without it too.
 */
export const addSessionSignedInAt: MigrationDef = {
  name: '20261207-1020-add-session-signed-in-at',
  async up({ queryInterface: qi, transaction }) {
    await qi.addColumn('sessions', 'signed_in_at', { type: DataTypes.DATE, allowNull: true }, { transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    // Raw DROP COLUMN: removeColumn rebuilds the table on SQLite (docs/modules.md).
    await qi.sequelize.query('ALTER TABLE sessions DROP COLUMN signed_in_at', { transaction });
  },
};
