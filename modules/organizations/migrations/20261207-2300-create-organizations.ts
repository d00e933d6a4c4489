import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

const id = { type: DataTypes.STRING(36), primaryKey: true };
const orgRef = { type: DataTypes.STRING(36), allowNull: false, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' };
const when = (allowNull: boolean) => ({ type: DataTypes.DATE, allowNull });

/**
 * Organizations, their members (one role each) and their custom roles (issue 53). Ids are UUIDv7, so
 * ordering by id is ordering by creation: the lists' keyset cursors need no second column.
 */
export const createOrganizations: MigrationDef = {
  name: '20261207-2300-create-organizations',
  async up({ queryInterface: qi, transaction }) {
    await qi.createTable(
      'organizations',
      {
        id,
        slug: { type: DataTypes.STRING(63), allowNull: false, unique: true },
        name: { type: DataTypes.STRING(200), allowNull: false },
        logo: { type: DataTypes.STRING(2000), allowNull: true },
        metadata: { type: DataTypes.JSON, allowNull: true },
        created_at: when(false),
        updated_at: when(false),
      },
      { transaction },
    );
    await qi.createTable(
      'organization_members',
      {
        id,
        organization_id: orgRef,
        user_id: { type: DataTypes.STRING(36), allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
        role: { type: DataTypes.STRING(64), allowNull: false },
        created_at: when(false),
        updated_at: when(false),
      },
      { transaction },
    );
    await qi.addIndex('organization_members', ['organization_id', 'user_id'], { name: 'organization_members_org_user', unique: true, transaction });
    await qi.addIndex('organization_members', ['user_id', 'organization_id'], { name: 'organization_members_user', transaction });
    await qi.addIndex('organization_members', ['organization_id', 'role'], { name: 'organization_members_org_role', transaction });
    await qi.createTable(
      'organization_roles',
      {
        id,
        organization_id: orgRef,
        name: { type: DataTypes.STRING(64), allowNull: false },
        permissions: { type: DataTypes.JSON, allowNull: false },
        created_at: when(false),
        updated_at: when(false),
      },
      { transaction },
    );
    await qi.addIndex('organization_roles', ['organization_id', 'name'], { name: 'organization_roles_org_name', unique: true, transaction });
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('organization_roles', { transaction });
    await qi.dropTable('organization_members', { transaction });
    await qi.dropTable('organizations', { transaction });
  },
};
