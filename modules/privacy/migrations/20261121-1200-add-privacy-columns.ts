import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

export const PRIVACY_COLUMNS = {
  gdpr_consent: DataTypes.BOOLEAN,
  gdpr_consent_at: DataTypes.DATE,
  gdpr_consent_version: DataTypes.STRING(32),
  ccpa_applies: DataTypes.BOOLEAN,
  ccpa_opt_out: DataTypes.BOOLEAN,
  ccpa_opt_out_at: DataTypes.DATE,
  privacy_region: DataTypes.STRING(16),
};

/** GDPR/CCPA state on users, all nullable: "not asked yet" is null, not false. */
export const addPrivacyColumns: MigrationDef = {
  name: '20261121-1200-add-privacy-columns',
  async up({ queryInterface: qi, transaction }) {
    for (const [name, type] of Object.entries(PRIVACY_COLUMNS)) {
      await qi.addColumn('users', name, { type, allowNull: true }, { transaction });
    }
  },
  async down({ sequelize, transaction }) {
    // Raw DROP COLUMN: Sequelize's SQLite removeColumn rebuilds the table and cascades into sessions.
    for (const name of Object.keys(PRIVACY_COLUMNS).reverse()) {
      await sequelize.query(`ALTER TABLE users DROP COLUMN ${name}`, { transaction });
    }
  },
};
