import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

/** Consent history: every change of consent, opt-out or region, and exports and erasures. */
export const createConsentEvents: MigrationDef = {
  name: '20261121-1201-create-consent-events',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'privacy_consent_events',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        user_id: {
          type: DataTypes.STRING(36),
          allowNull: false,
          references: { model: 'users', key: 'id' },
          onDelete: 'CASCADE',
        },
        kind: { type: DataTypes.STRING(40), allowNull: false },
        details: { type: DataTypes.JSON, allowNull: true },
        // Who made the change: the user themself, an admin (by id), or the system.
        actor: { type: DataTypes.STRING(16), allowNull: false },
        actor_id: { type: DataTypes.STRING(36), allowNull: true },
        created_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
    await qi.addIndex('privacy_consent_events', ['user_id', 'created_at'], { name: 'privacy_consent_events_user', transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('privacy_consent_events', { transaction });
  },
};
