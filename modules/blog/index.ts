import { defineModule } from '../../src/module-api.js';
import { eraseBlog, exportBlog } from './data-rights.js';
import { publishScheduledJob } from './jobs.js';
import { BLOG_TABLES, createBlogTables } from './migrations/20261124-1200-create-blog-tables.js';
import { blogSearch } from './migrations/20261124-1201-blog-search.js';
import { routes } from './routes.js';
import { blogConfig } from './settings.js';
import { BLOG_AUDIT_EVENTS } from './audit.js';
import { blogPostTypes } from './migrations/20261125-1000-blog-post-types.js';
import { blogCommentQueue } from './migrations/20261126-1900-blog-comment-queue.js';
import { blogViewsPerNetworkDay } from './migrations/20261207-1930-blog-views-per-network-day.js';
import { countByType, defaultBehaviors, moveType } from './types.js';
import { consoleNav, consolePages } from './web/console.js';

/** Blog: posts, categories and tags, comments with moderation, reactions, bookmarks, views and stats, translations. */
export default defineModule({
  id: 'blog',
  version: '1.0.0',
  description:
    'Blog under /api/v1/posts: posts, categories, tags, comments with moderation, reactions, bookmarks, views, stats, translations, search, sitemap and feed',
  requires: [],
  config: blogConfig,
  migrations: [createBlogTables, blogSearch, blogPostTypes, blogCommentQueue, blogViewsPerNetworkDay],
  routes,
  // Post types: a provider (post-types) answers `blog.post_types`; these three serve it.
  hooks: [
    { event: 'blog.post_types.defaults', handler: defaultBehaviors },
    { event: 'blog.post_types.usage', handler: countByType },
    { event: 'blog.post_types.move', handler: moveType },
  ],
  jobs: [publishScheduledJob],
  emails: [],
  userFields: [],
  commands: [],
  tables: [...BLOG_TABLES],
  // The console's moderation page (/admin/blog), its template and strings: modules/blog/web.
  web: { console: consolePages, nav: consoleNav },
  errorCodes: [
    { code: 'UNKNOWN_POST_TYPE', status: 400, description: 'post_type names no post type.' },
    { code: 'POST_TYPE_INACTIVE', status: 400, description: 'The post type is switched off: no new posts of it.' },
    { code: 'BODY_FORMAT_NOT_ALLOWED', status: 400, description: "body_format is not among the type's allowed_body_formats." },
    { code: 'PASSWORD_VISIBILITY_DISABLED', status: 400, description: 'The post type does not allow visibility "password".' },
    { code: 'SCHEDULING_DISABLED', status: 400, description: 'The post type does not allow scheduling.' },
    { code: 'SEO_DISABLED', status: 400, description: 'The post type has no SEO fields.' },
    { code: 'POST_TYPE_LIMIT_REACHED', status: 403, description: "The author has the type's max_per_author posts." },
    { code: 'COMMENTS_DISABLED', status: 403, description: 'The post type takes no comments.' },
    { code: 'REACTIONS_DISABLED', status: 403, description: 'The post type takes no reactions.' },
    { code: 'BOOKMARKS_DISABLED', status: 403, description: 'The post type takes no bookmarks.' },
    { code: 'VIEWS_DISABLED', status: 403, description: 'The post type counts no views.' },
  ],
  exporters: [{ name: 'blog', run: exportBlog }],
  erasers: [{ name: 'blog', run: eraseBlog }],
  auditEvents: BLOG_AUDIT_EVENTS,
});
