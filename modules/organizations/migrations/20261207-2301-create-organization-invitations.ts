import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

const when = (allowNull: boolean) => ({ type: DataTypes.DATE, allowNull });

/**
 * Invitations to an organization: an email, the role it joins with and the HMAC-SHA256 of the link's
 * token (the token itself is only in the mail), single use.
 */
export const createOrganizationInvitations: MigrationDef = {
  name: '20261207-2301-create-organization-invitations',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'organization_invitations',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        organization_id: { type: DataTypes.STRING(36), allowNull: false, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' },
        email: { type: DataTypes.STRING(254), allowNull: false },
        role: { type: DataTypes.STRING(64), allowNull: false },
        token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
        invited_by: { type: DataTypes.STRING(36), allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
        expires_at: when(false),
        accepted_at: when(true),
        accepted_by: { type: DataTypes.STRING(36), allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
        revoked_at: when(true),
        created_at: when(false),
      },
      { transaction },
    );
    await qi.addIndex('organization_invitations', ['organization_id', 'email'], { name: 'organization_invitations_org_email', transaction });
    await qi.addIndex('organization_invitations', ['email'], { name: 'organization_invitations_email', transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('organization_invitations', { transaction });
  },
};
