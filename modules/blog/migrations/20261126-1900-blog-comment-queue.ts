import type { MigrationDef } from '../../../src/module-api.js';

/**
 * The moderation queue across posts (GET /api/v1/posts/comments?status=pending): comments of one
 * status, oldest first, keyset paged on (created_at, id). The existing `blog_comments_post` index is
 * led by the post, so the queue gets its own, on the live comments only.
 */
export const blogCommentQueue: MigrationDef = {
  name: '20261126-1900-blog-comment-queue',
  async up({ queryInterface: qi, transaction }) {
    await qi.addIndex('blog_comments', ['status', 'created_at', 'id'], { name: 'blog_comments_queue', where: { deleted_at: null }, transaction });
  },
  async down({ sequelize, transaction }) {
    await sequelize.query('DROP INDEX IF EXISTS blog_comments_queue', { transaction });
  },
};
