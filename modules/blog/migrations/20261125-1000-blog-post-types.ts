import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

const SEO = ['meta_title', 'meta_description', 'canonical_url', 'og_image'] as const;

/**
 * Posts carry a type (`post` unless a post-types provider defines others), the type's field values,
 * and SEO fields. The listing index gains a twin led by the type, for lists of one type.
 */
export const blogPostTypes: MigrationDef = {
  name: '20261125-1000-blog-post-types',
  async up({ queryInterface: qi, transaction }) {
    const t = { transaction };
    await qi.addColumn('blog_posts', 'post_type', { type: DataTypes.STRING(64), allowNull: false, defaultValue: 'post' }, t);
    await qi.addColumn('blog_posts', 'fields', { type: DataTypes.JSON, allowNull: true }, t);
    await qi.addColumn('blog_posts', 'meta_title', { type: DataTypes.STRING(300), allowNull: true }, t);
    await qi.addColumn('blog_posts', 'meta_description', { type: DataTypes.STRING(500), allowNull: true }, t);
    await qi.addColumn('blog_posts', 'canonical_url', { type: DataTypes.STRING(2000), allowNull: true }, t);
    await qi.addColumn('blog_posts', 'og_image', { type: DataTypes.STRING(2000), allowNull: true }, t);
    await qi.addIndex('blog_posts', ['post_type', 'status', 'visibility', 'published_at', 'id'], {
      name: 'blog_posts_type_listing',
      where: { deleted_at: null },
      ...t,
    });
    // Counting an author's posts of a type (max_per_author).
    await qi.addIndex('blog_posts', ['author_id', 'post_type'], { name: 'blog_posts_author_type', ...t });
  },
  async down({ sequelize, transaction }) {
    const q = (sql: string) => sequelize.query(sql, { transaction });
    await q('DROP INDEX IF EXISTS blog_posts_type_listing');
    await q('DROP INDEX IF EXISTS blog_posts_author_type');
    // Plain ALTER TABLE … DROP COLUMN on both dialects (SQLite ≥ 3.35), so SQLite keeps the table and its triggers.
    for (const c of ['post_type', 'fields', ...SEO]) await q(`ALTER TABLE blog_posts DROP COLUMN ${c}`);
  },
};
