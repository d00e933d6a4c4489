import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../migration-types.js';

/**
 * The APIs registered with the OpenID provider (src/oidc/resources.ts, docs/oidc.md "Registered APIs"): an
 * identifier (the resource indicator and the JWT access tokens' audience), a name, its scopes (JSON) and the
 * lifetime of its access tokens (null: the provider's default).
 */
export const createOidcResources: MigrationDef = {
  name: '20261207-1000-create-oidc-resources',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'oidc_resources',
      {
        identifier: { type: DataTypes.STRING(500), primaryKey: true },
        name: { type: DataTypes.STRING(200), allowNull: false },
        scopes: { type: DataTypes.TEXT, allowNull: false },
        access_token_ttl: { type: DataTypes.INTEGER, allowNull: true },
        created_at: { type: DataTypes.DATE, allowNull: false },
        updated_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('oidc_resources', { transaction });
  },
};
