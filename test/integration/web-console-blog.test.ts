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
