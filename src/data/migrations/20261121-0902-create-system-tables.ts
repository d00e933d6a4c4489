import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/** Module state, settings, scheduled job runs, and one-time account tokens (reset, verify, login). */
export const createSystemTables: MigrationDef = {
  name: '20261121-0902-create-system-tables',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'module_state',
      {
        module_id: { type: DataTypes.STRING(64), primaryKey: true },
        version: { type: DataTypes.STRING(32), allowNull: false },
        enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        info: { type: DataTypes.JSON, allowNull: true },
        installed_at: { type: DataTypes.DATE, allowNull: false },
        updated_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
    await qi.createTable(
      'settings',
      {
        key: { type: DataTypes.STRING(128), primaryKey: true },
        value: { type: DataTypes.JSON, allowNull: true },
        updated_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
    await qi.createTable(
      'job_runs',
      {
        // `<job>@<scheduled tick>`: the first instance to insert it runs the job for that tick.
        run_key: { type: DataTypes.STRING(200), primaryKey: true },
        job: { type: DataTypes.STRING(64), allowNull: false },
        holder: { type: DataTypes.STRING(100), allowNull: false },
        status: { type: DataTypes.STRING(16), allowNull: false },
        detail: { type: DataTypes.STRING(500), allowNull: true },
        started_at: { type: DataTypes.DATE, allowNull: false },
        finished_at: { type: DataTypes.DATE, allowNull: true },
      },
      { transaction },
    );
    await qi.addIndex('job_runs', ['started_at'], { name: 'job_runs_started_at', transaction });
    await qi.createTable(
      'auth_tokens',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        kind: { type: DataTypes.STRING(32), allowNull: false },
        user_id: {
          type: DataTypes.STRING(36),
          allowNull: true,
          references: { model: 'users', key: 'id' },
          onDelete: 'CASCADE',
        },
        // SHA-256 of the token (and of the short code when one is sent); never the clear value.
        token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
        code_hash: { type: DataTypes.STRING(64), allowNull: true },
        channel: { type: DataTypes.STRING(16), allowNull: true },
        identifier: { type: DataTypes.STRING(254), allowNull: true },
        attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        meta: { type: DataTypes.JSON, allowNull: true },
        created_at: { type: DataTypes.DATE, allowNull: false },
        expires_at: { type: DataTypes.DATE, allowNull: false },
        used_at: { type: DataTypes.DATE, allowNull: true },
      },
      { transaction },
    );
    await qi.addIndex('auth_tokens', ['user_id', 'kind'], { name: 'auth_tokens_user_kind', transaction });
    await qi.addIndex('auth_tokens', ['expires_at'], { name: 'auth_tokens_expires_at', transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('auth_tokens', { transaction });
    await qi.dropTable('job_runs', { transaction });
    await qi.dropTable('settings', { transaction });
    await qi.dropTable('module_state', { transaction });
  },
};
