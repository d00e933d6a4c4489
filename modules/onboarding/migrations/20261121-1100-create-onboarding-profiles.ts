import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

/**
 * One onboarding state per user. The acquisition_* and team_size_range columns are write-only:
 * they live here, not on users, so no user read can ever carry them.
 */
export const createOnboardingProfiles: MigrationDef = {
  name: '20261121-1100-create-onboarding-profiles',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'onboarding_profiles',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        user_id: {
          type: DataTypes.STRING(36),
          allowNull: false,
          unique: true,
          references: { model: 'users', key: 'id' },
          onDelete: 'CASCADE',
        },
        status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'not_started' },
        step: { type: DataTypes.STRING(32), allowNull: true },
        completed_steps: { type: DataTypes.JSON, allowNull: true },
        skipped_steps: { type: DataTypes.JSON, allowNull: true },
        data: { type: DataTypes.JSON, allowNull: true },
        acquisition_source: { type: DataTypes.STRING(200), allowNull: true },
        acquisition_medium: { type: DataTypes.STRING(200), allowNull: true },
        acquisition_campaign: { type: DataTypes.STRING(200), allowNull: true },
        acquisition_referrer: { type: DataTypes.STRING(500), allowNull: true },
        acquisition_details: { type: DataTypes.TEXT, allowNull: true },
        acquisition_extra: { type: DataTypes.JSON, allowNull: true },
        team_size_range: { type: DataTypes.STRING(32), allowNull: true },
        started_at: { type: DataTypes.DATE, allowNull: true },
        completed_at: { type: DataTypes.DATE, allowNull: true },
        created_at: { type: DataTypes.DATE, allowNull: false },
        updated_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('onboarding_profiles', { transaction });
  },
};
