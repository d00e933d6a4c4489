import { defineModule } from './core.js';
import { eraseBlog, exportBlog } from './data-rights.js';
import { publishScheduledJob } from './jobs.js';
import { BLOG_TABLES, createBlogTables } from './migrations/20261124-1200-create-blog-tables.js';
import { blogSearch } from './migrations/20261124-1201-blog-search.js';
import { routes } from './routes.js';
import { blogConfig } from './settings.js';

/** Blog: posts, categories and tags, comments with moderation, reactions, bookmarks, views and stats, translations. */
export default defineModule({
  id: 'blog',
  version: '1.0.0',
  description:
    'Blog under /api/v1/posts: posts, categories, tags, comments with moderation, reactions, bookmarks, views, stats, translations, search, sitemap and feed',
  requires: [],
  config: blogConfig,
  migrations: [createBlogTables, blogSearch],
  routes,
  hooks: [],
  jobs: [publishScheduledJob],
  emails: [],
  userFields: [],
  commands: [],
  tables: [...BLOG_TABLES],
  exporters: [{ name: 'blog', run: exportBlog }],
  erasers: [{ name: 'blog', run: eraseBlog }],
});
