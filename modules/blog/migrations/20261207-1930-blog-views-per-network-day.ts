import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

/**
 * Views are counted once per post, client network (IPv4 /24, IPv6 /48) and UTC day, whatever the
 * User-Agent (issue 52: rotating it from one address inflated the count). A row is now one counted
 * view: `viewer_key` is a keyed digest of the network, `view_day` the UTC date. Rows from before keep
 * a null day (and a key of address and agent): they stay counted and never collide with new ones.
 */
export const blogViewsPerNetworkDay: MigrationDef = {
  name: '20261207-1930-blog-views-per-network-day',
  async up({ queryInterface: qi, sequelize, transaction }) {
    await qi.addColumn('blog_views', 'view_day', { type: DataTypes.STRING(10), allowNull: true }, { transaction });
    await sequelize.query('DROP INDEX IF EXISTS blog_views_viewer', { transaction });
    await qi.addIndex('blog_views', ['post_id', 'viewer_key', 'view_day'], { unique: true, name: 'blog_views_viewer_day', transaction });
  },
  async down({ queryInterface: qi, sequelize, transaction }) {
    // The old key allowed one row per viewer and post: the per-day rows cannot all stay.
    await sequelize.query('DELETE FROM blog_views WHERE view_day IS NOT NULL', { transaction });
    await sequelize.query('DROP INDEX IF EXISTS blog_views_viewer_day', { transaction });
    await sequelize.query('ALTER TABLE blog_views DROP COLUMN view_day', { transaction });
    await qi.addIndex('blog_views', ['post_id', 'viewer_key'], { unique: true, name: 'blog_views_viewer', transaction });
  },
};
