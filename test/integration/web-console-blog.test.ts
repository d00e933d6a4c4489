import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePost, people, published, startBlog, type TestApp } from '../../modules/blog/test/kit.js';
import { DEFAULT_PASSWORD } from '../helpers/factories.js';
import { WebClient } from '../helpers/web-client.js';

// The console's blog moderation: the blog's own routes, found by method and path, with the admin's session.
let t: TestApp;
let p: Awaited<ReturnType<typeof people>>;
beforeAll(async () => {
  t = await startBlog({ config: { comments_require_approval: true } });
  p = await people(t);
});
afterAll(async () => {
  await t?.close();
});

function consoleCsrf(html: string): string {
  const all = [...html.matchAll(/name="_csrf" value="([^"]+)"/g)].map((m) => m[1]);
  return all[all.length - 1];
}

async function signedIn(email: string) {
  const c = new WebClient(t.url);
  expect((await c.submit('/login', '/login', { email, password: DEFAULT_PASSWORD })).status).toBe(303);
  return c;
}

describe('blog moderation in the console', () => {
  it('when a comment and a post wait, then an admin approves, rejects and deletes them from /admin/blog, escaped, through the blog', async () => {
    const post = await published(t, p.writer.token);
    const comment = (
      await t.request('POST', `/api/v1/posts/${post.id}/comments`, { session: p.customer.token, body: { comment_body: '<script>alert(1)</script>' } })
    ).body.data;
    expect(comment.status).toBe('pending');
    const other = (await t.request('POST', `/api/v1/posts/${post.id}/comments`, { session: p.customer2.token, body: { comment_body: 'second' } })).body.data;
    // A post waiting for review (a post type with requires_approval puts a writer's post there; set directly here).
    const review = await makePost(t, p.writer.token);
    await t.app.sequelize.query("UPDATE blog_posts SET status = 'pending' WHERE id = ?", { replacements: [review.id] });

    const c = await signedIn(p.admin.email);
    const page = await c.get('/admin/blog');
    expect(page.status).toBe(200);
    expect(page.text).toContain('href="/admin/blog"');
    expect(page.text).toContain(`data-comment="${comment.id}"`);
    expect(page.text).toContain(`data-post="${review.id}"`);
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.text).not.toContain('<script>alert(1)');
    const token = consoleCsrf(page.text);

    expect((await c.request('POST', `/admin/blog/comments/${comment.id}/approve`, { form: { _csrf: token } })).status).toBe(303);
    const listed = await t.request('GET', `/api/v1/posts/${post.id}/comments`);
    expect(listed.body.data.map((x: { id: string }) => x.id)).toContain(comment.id);
    expect((await c.request('POST', `/admin/blog/comments/${other.id}/reject`, { form: { _csrf: token } })).status).toBe(303);
    const rejected = await t.request('GET', `/api/v1/posts/${post.id}/comments?status=rejected`, { session: p.admin.token });
    expect(rejected.body.data.map((x: { id: string }) => x.id)).toEqual([other.id]);

    expect((await c.request('POST', `/admin/blog/posts/${review.id}/approve`, { form: { _csrf: token } })).status).toBe(303);
    expect((await t.request('GET', `/api/v1/posts/id/${review.id}`)).body.data.status).toBe('published');
    expect((await c.request('POST', `/admin/blog/posts/${review.id}/delete`, { form: { _csrf: token } })).status).toBe(303);
    expect((await t.request('GET', `/api/v1/posts/id/${review.id}`)).status).toBe(404);
    // The blog's own audit events name the admin.
    const events = await t.app.services.audit.list({ actorId: p.admin.id, limit: 20 });
    expect(events.events.some((e) => e.type.startsWith('blog.'))).toBe(true);
  });

  it('when comments wait on older posts and more than a page of them, then the queue shows them all, page by page, and the post types are listed', async () => {
    const oldest = await published(t, p.writer.token, { title: 'Oldest post with a waiting comment' });
    const early = (await t.request('POST', `/api/v1/posts/${oldest.id}/comments`, { session: p.customer.token, body: { comment_body: 'on the oldest' } })).body
      .data;
    // Twelve newer posts (beyond the 10 newest the console used to look at), then a page and more of waiting comments.
    for (let i = 0; i < 12; i++) await published(t, p.writer.token);
    const busy = await published(t, p.writer.token);
    const many: string[] = [];
    for (let i = 0; i < 55; i++) {
      many.push((await t.request('POST', `/api/v1/posts/${busy.id}/comments`, { session: p.customer2.token, body: { comment_body: `n${i}` } })).body.data.id);
    }
    await t.app.modules.hub.install(['post-types']);
    try {
      const c = await signedIn(p.admin.email);
      const first = await c.get('/admin/blog');
      expect(first.status).toBe(200);
      expect(first.text).toContain(`data-comment="${early.id}"`);
      expect(first.text).toContain('Oldest post with a waiting comment');
      expect(first.text).toContain('Across all posts, oldest first.');
      // The post types list (the post-types module's GET /api/v1/post-types?active=false).
      expect(first.text).toContain('Post types');
      expect(first.text).toContain('<code>post</code>');
      const next = /href="([^"]+)" data-queue-next/.exec(first.text)?.[1];
      expect(next).toMatch(/^\/admin\/blog\?cursor=/);
      const second = await c.get(next!.replace(/&amp;/g, '&'));
      expect(second.status).toBe(200);
      const shown = (html: string) => [...html.matchAll(/data-comment="([^"]+)"/g)].map((m) => m[1]);
      const all = [...shown(first.text), ...shown(second.text)];
      for (const id of [early.id, ...many]) expect(all).toContain(id);
      expect(new Set(all).size).toBe(all.length);
      expect((await c.get('/admin/blog?cursor=bogus')).status).toBe(400);
    } finally {
      await t.app.modules.hub.uninstall('post-types').catch(() => undefined);
    }
  });

  it('when a customer opens /admin/blog or the blog is uninstalled, then 403, then 404', async () => {
    const customer = await signedIn(p.customer.email);
    expect((await customer.get('/admin/blog')).status).toBe(403);
    const c = await signedIn(p.admin.email);
    await t.app.modules.hub.disable('blog');
    try {
      expect((await c.get('/admin/blog')).status).toBe(404);
      expect((await c.get('/admin')).text).not.toContain('href="/admin/blog"');
    } finally {
      await t.app.modules.hub.enable('blog');
    }
  });
});
