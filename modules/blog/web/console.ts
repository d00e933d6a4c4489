import { isAppError, notFound, type ModuleConsolePage, type ModuleConsoleNav, type ModulePageKit } from '../../../src/module-api.js';

/**
 * The blog's console pages (/admin/blog): the posts and comments waiting for review, and the post types,
 * each through the blog's own API routes (and post-types', when that module is on), run in process with
 * the staff member's session. Template: ./admin-blog.eta; strings: ./i18n (`blog.console.*`).
 */

/** Pending comments per page of the moderation queue (the blog's keyset-paged queue across posts). */
const QUEUE_PAGE = 50;

/** What a blog list route answers (the module envelope): its items and its paging. */
type Listed = { data?: unknown[]; meta?: Record<string, unknown> };

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** GET /admin/blog: pending posts, the queue of pending comments across all posts (`?cursor=`), and the post types. */
async function queue(kit: ModulePageKit): Promise<void> {
  const { t, req } = kit;
  const pending = (await kit.callRoute('get', '/api/v1/posts', { query: { status: 'pending', limit: '50' } })) as Listed | null;
  if (!pending) throw notFound('The blog is not installed');
  const cursor = str(req.query.cursor)?.slice(0, 200);
  const waiting = (await kit.callRoute('get', '/api/v1/posts/comments', {
    query: { status: 'pending', limit: String(QUEUE_PAGE), ...(cursor ? { cursor } : {}) },
  })) as Listed | null;
  const comments = ((waiting?.data ?? []) as (Record<string, unknown> & { post: { id: string; title?: string } })[]).map((c) => ({ post: c.post, comment: c }));
  const nextCursor = waiting?.meta?.next_cursor;
  // The post types are another module's (post-types): null when it is off.
  const types = await (kit.callRoute('get', '/api/v1/post-types', { query: { active: 'false' } }) as Promise<Listed | null>).catch((err: unknown) => {
    if (isAppError(err) && err.status < 500) return null;
    throw err;
  });
  const done = str(req.query.done);
  kit.render(
    'admin-blog',
    {
      posts: pending.data ?? [],
      comments,
      more: typeof nextCursor === 'string' ? `/admin/blog?${new URLSearchParams({ cursor: nextCursor }).toString()}` : null,
      types: types ? (types.data ?? []) : null,
      notice: done === 'moderated' ? t('blog.console.done_moderated') : null,
    },
    { title: t('blog.console.blog') },
  );
}

/** A moderation action: the blog's own route, then back to the queue. */
const moderate =
  (method: 'post' | 'delete', path: string, body?: unknown) =>
  async (kit: ModulePageKit): Promise<void> => {
    const r = await kit.callRoute(method, path, { params: { id: kit.params.id }, body });
    if (!r) throw notFound('The blog is not installed');
    kit.res.redirect(303, '/admin/blog?done=moderated');
  };

export const consolePages: ModuleConsolePage[] = [
  { method: 'get', path: '/admin/blog', handler: queue },
  { method: 'post', path: '/admin/blog/posts/:id/approve', handler: moderate('post', '/api/v1/posts/:id/publish') },
  { method: 'post', path: '/admin/blog/posts/:id/reject', handler: moderate('post', '/api/v1/posts/:id/unpublish') },
  { method: 'post', path: '/admin/blog/posts/:id/delete', handler: moderate('delete', '/api/v1/posts/:id') },
  { method: 'post', path: '/admin/blog/comments/:id/approve', handler: moderate('post', '/api/v1/posts/comments/:id/moderate', { action: 'approve' }) },
  { method: 'post', path: '/admin/blog/comments/:id/reject', handler: moderate('post', '/api/v1/posts/comments/:id/moderate', { action: 'reject' }) },
  { method: 'post', path: '/admin/blog/comments/:id/delete', handler: moderate('delete', '/api/v1/posts/comments/:id') },
];

export const consoleNav: ModuleConsoleNav[] = [{ path: '/admin/blog', label: 'blog.console.blog' }];
