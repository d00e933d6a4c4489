import { DataTypes } from 'sequelize';
import type { MigrationDef } from '../../../src/module-api.js';

const id = { type: DataTypes.STRING(36), primaryKey: true };
const ref = (model: string, allowNull = false, onDelete = 'CASCADE') => ({
  type: DataTypes.STRING(36),
  allowNull,
  references: { model, key: 'id' },
  onDelete,
});
const at = (allowNull = false) => ({ type: DataTypes.DATE, allowNull });

/** Every blog table, newest last; `down` drops them in reverse. */
export const BLOG_TABLES = [
  'blog_posts',
  'blog_post_slugs',
  'blog_categories',
  'blog_tags',
  'blog_post_categories',
  'blog_post_tags',
  'blog_comments',
  'blog_reactions',
  'blog_bookmarks',
  'blog_views',
  'blog_translations',
  'blog_images',
] as const;

export const createBlogTables: MigrationDef = {
  name: '20261124-1200-create-blog-tables',
  async up({ queryInterface: qi, transaction }) {
    const t = { transaction };
    await qi.createTable(
      'blog_posts',
      {
        id,
        slug: { type: DataTypes.STRING(200), allowNull: false },
        title: { type: DataTypes.STRING(300), allowNull: false },
        body: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        body_format: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'markdown' },
        body_html: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        excerpt: { type: DataTypes.TEXT, allowNull: true },
        status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'draft' },
        visibility: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'public' },
        password_hash: { type: DataTypes.STRING(100), allowNull: true },
        lang: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'en' },
        metadata: { type: DataTypes.JSON, allowNull: true },
        author_id: ref('users'),
        featured_image_id: { type: DataTypes.STRING(36), allowNull: true },
        view_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        published_at: at(true),
        scheduled_at: at(true),
        created_at: at(),
        updated_at: at(),
        deleted_at: at(true),
      },
      t,
    );
    await qi.addIndex('blog_posts', ['lang', 'slug'], { unique: true, name: 'blog_posts_lang_slug', ...t });
    // The public list: equality on status and visibility, newest first, id as the tie-break.
    await qi.addIndex('blog_posts', ['status', 'visibility', 'published_at', 'id'], { name: 'blog_posts_listing', where: { deleted_at: null }, ...t });
    // Counting the visible posts: two short keys, deduplicated to a few index pages.
    await qi.addIndex('blog_posts', ['status', 'visibility'], { name: 'blog_posts_visible', where: { deleted_at: null }, ...t });
    // Reads by slug name no language.
    await qi.addIndex('blog_posts', ['slug'], { name: 'blog_posts_slug', ...t });
    await qi.addIndex('blog_posts', ['author_id', 'created_at'], { name: 'blog_posts_author', ...t });
    await qi.addIndex('blog_posts', ['status', 'scheduled_at'], { name: 'blog_posts_schedule', ...t });

    // Slugs a post answered to before it was renamed.
    await qi.createTable(
      'blog_post_slugs',
      {
        id,
        post_id: ref('blog_posts'),
        lang: { type: DataTypes.STRING(16), allowNull: false },
        slug: { type: DataTypes.STRING(200), allowNull: false },
        created_at: at(),
      },
      t,
    );
    await qi.addIndex('blog_post_slugs', ['lang', 'slug'], { unique: true, name: 'blog_post_slugs_lang_slug', ...t });
    await qi.addIndex('blog_post_slugs', ['post_id'], { name: 'blog_post_slugs_post', ...t });
    await qi.addIndex('blog_post_slugs', ['slug'], { name: 'blog_post_slugs_slug', ...t });

    for (const table of ['blog_categories', 'blog_tags']) {
      await qi.createTable(
        table,
        {
          id,
          slug: { type: DataTypes.STRING(120), allowNull: false, unique: true },
          name: { type: DataTypes.STRING(120), allowNull: false },
          description: { type: DataTypes.TEXT, allowNull: true },
          created_at: at(),
          updated_at: at(),
        },
        t,
      );
    }
    await qi.createTable(
      'blog_post_categories',
      { post_id: { ...ref('blog_posts'), primaryKey: true }, category_id: { ...ref('blog_categories'), primaryKey: true } },
      t,
    );
    await qi.addIndex('blog_post_categories', ['category_id', 'post_id'], { name: 'blog_post_categories_category', ...t });
    await qi.createTable('blog_post_tags', { post_id: { ...ref('blog_posts'), primaryKey: true }, tag_id: { ...ref('blog_tags'), primaryKey: true } }, t);
    await qi.addIndex('blog_post_tags', ['tag_id', 'post_id'], { name: 'blog_post_tags_tag', ...t });

    await qi.createTable(
      'blog_comments',
      {
        id,
        post_id: ref('blog_posts'),
        user_id: ref('users'),
        parent_id: { type: DataTypes.STRING(36), allowNull: true },
        body: { type: DataTypes.TEXT, allowNull: false },
        status: { type: DataTypes.STRING(16), allowNull: false },
        moderation_reason: { type: DataTypes.STRING(500), allowNull: true },
        moderated_by: { type: DataTypes.STRING(36), allowNull: true },
        moderated_at: at(true),
        created_at: at(),
        updated_at: at(),
        deleted_at: at(true),
      },
      t,
    );
    await qi.addIndex('blog_comments', ['post_id', 'status', 'created_at'], { name: 'blog_comments_post', ...t });
    await qi.addIndex('blog_comments', ['user_id'], { name: 'blog_comments_user', ...t });

    await qi.createTable(
      'blog_reactions',
      { id, post_id: ref('blog_posts'), user_id: ref('users'), reaction_type: { type: DataTypes.STRING(32), allowNull: false }, created_at: at() },
      t,
    );
    await qi.addIndex('blog_reactions', ['post_id', 'user_id', 'reaction_type'], { unique: true, name: 'blog_reactions_once', ...t });
    await qi.addIndex('blog_reactions', ['user_id'], { name: 'blog_reactions_user', ...t });

    await qi.createTable('blog_bookmarks', { id, post_id: ref('blog_posts'), user_id: ref('users'), created_at: at() }, t);
    await qi.addIndex('blog_bookmarks', ['user_id', 'post_id'], { unique: true, name: 'blog_bookmarks_once', ...t });
    await qi.addIndex('blog_bookmarks', ['post_id'], { name: 'blog_bookmarks_post', ...t });

    // One row per viewer and post: the last counted view opens a 30-minute window.
    await qi.createTable(
      'blog_views',
      {
        id,
        post_id: ref('blog_posts'),
        viewer_key: { type: DataTypes.STRING(64), allowNull: false },
        user_id: { type: DataTypes.STRING(36), allowNull: true },
        views: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
        counted_at: at(),
        created_at: at(),
      },
      t,
    );
    await qi.addIndex('blog_views', ['post_id', 'viewer_key'], { unique: true, name: 'blog_views_viewer', ...t });
    await qi.addIndex('blog_views', ['user_id'], { name: 'blog_views_user', ...t });

    await qi.createTable(
      'blog_translations',
      {
        id,
        post_id: ref('blog_posts'),
        lang: { type: DataTypes.STRING(16), allowNull: false },
        title: { type: DataTypes.STRING(300), allowNull: false },
        body: { type: DataTypes.TEXT, allowNull: false },
        body_html: { type: DataTypes.TEXT, allowNull: false },
        excerpt: { type: DataTypes.TEXT, allowNull: true },
        created_at: at(),
        updated_at: at(),
      },
      t,
    );
    await qi.addIndex('blog_translations', ['post_id', 'lang'], { unique: true, name: 'blog_translations_lang', ...t });

    await qi.createTable(
      'blog_images',
      {
        id,
        post_id: ref('blog_posts'),
        ext: { type: DataTypes.STRING(8), allowNull: false },
        content_type: { type: DataTypes.STRING(32), allowNull: false },
        width: { type: DataTypes.INTEGER, allowNull: false },
        height: { type: DataTypes.INTEGER, allowNull: false },
        bytes: { type: DataTypes.BLOB, allowNull: false },
        created_at: at(),
      },
      t,
    );
    await qi.addIndex('blog_images', ['post_id'], { name: 'blog_images_post', ...t });
  },
  async down({ queryInterface: qi, transaction }) {
    for (const table of [...BLOG_TABLES].reverse()) await qi.dropTable(table, { transaction });
  },
};
