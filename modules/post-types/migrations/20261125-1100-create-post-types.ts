import { randomUUID } from 'node:crypto';
import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';
import { BUILT_IN_TYPES } from '../definition.js';

export const POST_TYPE_TABLES = ['post_types', 'post_types_revision'] as const;

/**
 * Post type definitions, and one revision row that every change rewrites in its own transaction (the
 * caches compare it); the built-in types `post` and `page` are created here.
 */
export const createPostTypes: MigrationDef = {
  name: '20261125-1100-create-post-types',
  async up({ queryInterface: qi, transaction }) {
    const t = { transaction };
    await qi.createTable(
      'post_types',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        type_key: { type: DataTypes.STRING(64), allowNull: false, unique: true },
        type_name: { type: DataTypes.STRING(100), allowNull: false },
        description: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        slug_prefix: { type: DataTypes.STRING(100), allowNull: false, defaultValue: '' },
        // JSON as text on both dialects: written and read by the module only.
        field_schema: { type: DataTypes.TEXT, allowNull: false },
        behaviors: { type: DataTypes.TEXT, allowNull: false },
        icon: { type: DataTypes.STRING(100), allowNull: false, defaultValue: '' },
        color: { type: DataTypes.STRING(16), allowNull: false, defaultValue: '' },
        is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        is_built_in: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        sort_order: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        created_at: { type: DataTypes.DATE, allowNull: false },
        updated_at: { type: DataTypes.DATE, allowNull: false },
      },
      t,
    );
    await qi.createTable(
      'post_types_revision',
      {
        id: { type: DataTypes.INTEGER, primaryKey: true },
        revision: { type: DataTypes.STRING(36), allowNull: false },
        updated_at: { type: DataTypes.DATE, allowNull: false },
      },
      t,
    );
    const now = new Date();
    await qi.bulkInsert(
      'post_types',
      BUILT_IN_TYPES.map((d, i) => ({
        id: randomUUID(),
        type_key: d.type_key,
        type_name: d.type_name,
        description: d.description,
        slug_prefix: d.slug_prefix,
        field_schema: JSON.stringify(d.field_schema),
        behaviors: JSON.stringify(d.behaviors),
        icon: d.icon,
        color: d.color,
        is_active: true,
        is_built_in: true,
        sort_order: i,
        created_at: now,
        updated_at: now,
      })),
      t,
    );
    await qi.bulkInsert('post_types_revision', [{ id: 1, revision: randomUUID(), updated_at: now }], t);
  },
  async down({ queryInterface: qi, transaction }) {
    await qi.dropTable('post_types_revision', { transaction });
    await qi.dropTable('post_types', { transaction });
  },
};
