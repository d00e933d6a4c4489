import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScheduler } from '../../test/helpers/scheduler.js';
import { DEFAULT_PASSWORD } from '../../test/helpers/factories.js';
import { startTestApp } from '../../test/helpers/test-app.js';
import { publishScheduledJob } from './jobs.js';
import { BACKEND, makePost, people, published, startBlog, type TestApp } from './test/kit.js';

let t: TestApp;
let p: Awaited<ReturnType<typeof people>>;
beforeAll(async () => {
  t = await startBlog();
  p = await people(t);
});
afterAll(async () => {
  await t?.close();
});

const rows = async (sql: string, replacements: unknown[] = []) => (await t.app.sequelize.query(sql, { replacements, type: 'SELECT' as any })) as any[];
const count = async (sql: string, replacements: unknown[] = []) => Number((await rows(sql, replacements))[0].n);

describe(`blog scheduling, data rights and the hub (${BACKEND})`, () => {
  it('when a writer schedules a post a second ahead, then the job publishes it with no request touching it', async () => {
    const scheduler = startScheduler(t.app, []);
    try {
      expect(scheduler.scheduled().modules).toContain('blog-publish-scheduled');
      const post = await makePost(t, p.writer.token);
      const when = new Date(Date.now() + 1000);
      expect(
        (await t.request('POST', `/api/v1/posts/${post.id}/schedule`, { session: p.writer.token, body: { scheduled_at: when.toISOString() } })).status,
      ).toBe(200);
      const row = async () => (await rows('SELECT status, published_at, scheduled_at FROM blog_posts WHERE id = ?', [post.id]))[0];
      await expect.poll(async () => (await row()).status, { timeout: 15_000, interval: 250 }).toBe('published');
      const published = await row();
      expect(new Date(published.published_at).getTime()).toBe(when.getTime());
      expect(published.scheduled_at).toBeNull();
      expect((await t.request('GET', `/api/v1/posts/${post.slug}`)).status).toBe(200);
    } finally {
      await scheduler.stop();
    }
  }, 30_000);

  it('when two instances run the same second, then the publish job runs once', async () => {
    const b = await startTestApp({ sharing: t });
    const sa = startScheduler(t.app, []);
    const sb = startScheduler(b.app, []);
    try {
      const tick = new Date('2030-01-01T10:00:05Z');
      // Each instance's job as its module runtime schedules it (run with that instance's module context).
      const jobOf = (x: TestApp) => x.app.modules.jobs().find((j) => j.name === publishScheduledJob.name)!;
      const results = await Promise.all([sa.runNow(jobOf(t), tick), sb.runNow(jobOf(b), tick)]);
      expect(results.filter((r) => r.ran)).toHaveLength(1);
      expect((await sb.runNow(jobOf(b), new Date('2030-01-01T10:00:10Z'))).ran).toBe(true);
    } finally {
      await sa.stop();
      await sb.stop();
      await b.close();
    }
  });

  it('when a user exports and erases their data, then the blog part is in the export and erasure removes it', async () => {
    await t.app.modules.hub.install(['privacy']);
    try {
      const { writer, customer } = p;
      const post = await published(t, writer.token, { title: 'Mine to export' });
      await t.request('POST', `/api/v1/posts/id/${post.id}/translations`, {
        session: writer.token,
        body: { lang: 'de', title: 'Meins', body: 'Hallo', excerpt: '' },
      });
      const other = await published(t, p.writer2.token);
      await t.request('POST', `/api/v1/posts/${other.id}/comments`, { session: writer.token, body: { comment_body: 'writer says hi' } });
      await t.request('POST', `/api/v1/posts/${other.id}/reactions`, { session: writer.token, body: { reaction_type: 'like' } });
      await t.request('POST', `/api/v1/posts/${other.id}/bookmark`, { session: writer.token });
      const reply = await t.request('POST', `/api/v1/posts/${post.id}/comments`, {
        session: customer.token,
        body: { comment_body: 'customer on writer post' },
      });
      expect(reply.status).toBe(200);

      const ex = await t.request('GET', '/auth/user/me/privacy/export', { session: writer.token });
      expect(ex.status).toBe(200);
      const blog = ex.body.data.modules.blog.blog;
      expect(blog.posts.map((x: any) => x.id)).toContain(post.id);
      expect(blog.posts.find((x: any) => x.id === post.id).translations[0]).toMatchObject({ lang: 'de', title: 'Meins' });
      expect(blog.posts.find((x: any) => x.id === post.id)).toMatchObject({ post_type: 'post', meta_title: null });
      expect(blog.comments.map((c: any) => c.body)).toEqual(['writer says hi']);
      expect(blog.reactions).toEqual([expect.objectContaining({ post_id: other.id, reaction_type: 'like' })]);
      expect(blog.bookmarks).toEqual([expect.objectContaining({ post_id: other.id })]);
      expect(ex.text).not.toContain('password_hash');

      const del = await t.request('POST', '/auth/user/me/privacy/delete', { session: writer.token, body: { confirm: true, password: DEFAULT_PASSWORD } });
      expect(del.status).toBe(200);
      expect(del.body.data.erased).toContain('blog');
      for (const table of ['blog_comments', 'blog_reactions', 'blog_bookmarks', 'blog_views']) {
        expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE user_id = ?`, [writer.id]), table).toBe(0);
      }
      expect(await count('SELECT COUNT(*) AS n FROM blog_posts WHERE author_id = ?', [writer.id])).toBe(0);
      expect(await count('SELECT COUNT(*) AS n FROM blog_translations WHERE post_id = ?', [post.id])).toBe(0);
      expect((await t.request('GET', `/api/v1/posts/id/${post.id}`, { session: p.admin.token })).status).toBe(404);
      expect(await count('SELECT COUNT(*) AS n FROM blog_posts WHERE id = ?', [other.id])).toBe(1);
    } finally {
      await t.app.modules.hub.uninstall('privacy');
    }
  });

  it('when erasure is set to hand posts over, then they go to the named account; a bad setting erases nothing', async () => {
    await t.app.modules.hub.install(['privacy']);
    await t.app.modules.hub.uninstall('blog');
    try {
      await t.app.modules.hub.install(['blog'], { config: { blog: { erasure_posts: 'reassign', erasure_reassign_to: p.admin.email } } });
      const { writer2 } = p;
      const post = await published(t, writer2.token);
      const del = await t.request('POST', '/auth/user/me/privacy/delete', { session: writer2.token, body: { confirm: true, password: DEFAULT_PASSWORD } });
      expect(del.status).toBe(200);
      expect((await rows('SELECT author_id FROM blog_posts WHERE id = ?', [post.id]))[0].author_id).toBe(p.admin.id);
      expect((await t.request('GET', `/api/v1/posts/id/${post.id}`)).body.data.author_id).toBe(p.admin.id);

      await t.app.modules.hub.uninstall('blog');
      await t.app.modules.hub.install(['blog'], { config: { blog: { erasure_posts: 'reassign', erasure_reassign_to: 'nobody@example.test' } } });
      const c = p.customer2;
      await t.request('POST', `/api/v1/posts/${post.id}/comments`, { session: c.token, body: { comment_body: 'stays' } });
      const refused = await t.request('POST', '/auth/user/me/privacy/delete', { session: c.token, body: { confirm: true, password: DEFAULT_PASSWORD } });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ success: false, code: 'BLOG_ERASURE_MISCONFIGURED' });
      expect(await count('SELECT COUNT(*) AS n FROM blog_comments WHERE user_id = ?', [c.id])).toBe(1);
      expect((await t.request('GET', '/auth/user/me', { session: c.token, bridge: true })).status).toBe(200);
    } finally {
      await t.app.modules.hub.uninstall('blog');
      await t.app.modules.hub.install(['blog'], { config: { blog: { erasure_posts: 'delete', erasure_reassign_to: '' } } });
      await t.app.modules.hub.uninstall('privacy');
    }
  });

  it('when the blog is switched off, uninstalled and purged, then its routes answer 503 (disabled, then not installed), and its migrations go down and up again', async () => {
    const post = await published(t, p.admin.token);
    await t.app.modules.hub.disable('blog');
    const off = await t.request('GET', '/api/v1/posts/');
    expect(off.status).toBe(503);
    expect(off.body).toMatchObject({ success: false, code: 'MODULE_DISABLED' });
    await t.app.modules.hub.enable('blog');
    expect((await t.request('GET', '/api/v1/posts')).status).toBe(200);
    await t.app.modules.hub.uninstall('blog');
    const gone = await t.request('GET', '/api/v1/posts');
    expect(gone.status).toBe(503);
    expect(gone.body.error).toContain('gatehouse module install blog');
    await t.app.modules.hub.install(['blog']);
    expect((await t.request('GET', `/api/v1/posts/id/${post.id}`)).status).toBe(200);
    await t.app.modules.hub.uninstall('blog', { dropData: true });
    const left = await rows(
      BACKEND === 'pg'
        ? "SELECT table_name AS name FROM information_schema.tables WHERE table_name LIKE 'blog_%'"
        : "SELECT name FROM sqlite_master WHERE name LIKE 'blog_%'",
    );
    expect(left).toEqual([]);
    const [plan] = await t.app.modules.hub.planInstall(['blog']);
    expect(plan.tables).toContain('blog_posts');
    expect(plan.problems ?? []).toEqual([]);
    await t.app.modules.hub.install(['blog']);
    expect((await t.request('GET', `/api/v1/posts/id/${post.id}`)).status).toBe(404);
    const again = await published(t, p.admin.token, { title: 'searchable phoenix' });
    expect((await t.request('GET', '/api/v1/posts?q=phoenix')).body.data.map((x: any) => x.id)).toEqual([again.id]);
  });
});
