import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/**
 * How a session signed in (the sign-in seam's `method`: `password`, `token-login`, `social:<provider>`, a
 * module's own such as `passkey`), so the OpenID provider can say it in `amr` (docs/oidc.md). Null for
 * sessions from before, and for public registration's first session (which does not pass the seam).
 */
export const addSessionSignInMethod: MigrationDef = {
  name: '20261126-1410-add-session-sign-in-method',
  async up({ queryInterface: qi, transaction }) {
    await qi.addColumn('sessions', 'sign_in_method', { type: DataTypes.STRING(40), allowNull: true }, { transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    // Raw DROP COLUMN: removeColumn rebuilds the table on SQLite (docs/modules.md).
    await qi.sequelize.query('ALTER TABLE sessions DROP COLUMN sign_in_method', { transaction });
  },
};
