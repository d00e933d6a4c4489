import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

/**
 * Backup codes under a salted password hash (ASVS 5.0 6.5.2: a lookup secret of under 112 bits). A new
 * code's row holds bcrypt of the code and `lookup`, the first 16 bits of a keyed hash of it, so a
 * verification runs one bcrypt, not one per unused code. Rows from before keep a null lookup and their
 * keyed hash, and are used up as before.
 */
export const backupCodeLookup: MigrationDef = {
  name: '20261207-2330-backup-code-lookup',
  async up({ queryInterface: qi, transaction }) {
    await qi.addColumn('two_factor_backup_codes', 'lookup', { type: DataTypes.STRING(8), allowNull: true }, { transaction });
    await qi.addIndex('two_factor_backup_codes', ['method_id', 'lookup'], { name: 'two_factor_backup_codes_by_lookup', transaction });
  },
  async down({ sequelize, transaction }) {
    // A salted hash cannot become a keyed one: the codes made since go (the user makes new ones).
    await sequelize.query('DELETE FROM two_factor_backup_codes WHERE lookup IS NOT NULL', { transaction });
    // Raw statements: removeColumn rebuilds the table on SQLite (docs/modules.md).
    await sequelize.query('DROP INDEX IF EXISTS two_factor_backup_codes_by_lookup', { transaction });
    await sequelize.query('ALTER TABLE two_factor_backup_codes DROP COLUMN lookup', { transaction });
  },
};
