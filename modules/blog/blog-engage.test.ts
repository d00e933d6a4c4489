import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { png } from '../../test/integration/picture-images.js';
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

const req = (method: string, path: string, session?: string, body?: unknown, headers?: Record<string, string>) =>
  t.request(method, path, { session, body, headers });

describe(`blog comments, reactions, bookmarks, views and stats (${BACKEND})`, () => {
  it('when customers comment and reply, then comments list in order and bad input, no session and unknown posts are refused', async () => {
    const post = await published(t, p.writer.token);
    const url = `/api/v1/posts/${post.id}/comments`;
    const c1 = await req('POST', url, p.customer.token, { comment_body: 'First!' });
    expect(c1.status).toBe(200);
    expect(c1.body.data).toMatchObject({ post_id: post.id, comment_body: 'First!', status: 'approved', parent_id: null, user_id: p.customer.id });
    const reply = await req('POST', url, p.customer2.token, { comment_body: 'Reply', parent_id: c1.body.data.id });
    expect(reply.body.data.parent_id).toBe(c1.body.data.id);
    for (const body of [
      {},
      { comment_body: '' },
      { comment_body: 'x'.repeat(10_001) },
      { comment_body: 'x', parent_id: 'nope' },
      { comment_body: 'x', extra: 1 },
    ]) {
      expect((await req('POST', url, p.customer.token, body)).status, JSON.stringify(body).slice(0, 40)).toBe(400);
    }
    expect((await req('POST', url, undefined, { comment_body: 'x' })).status).toBe(401);
    expect((await req('POST', '/api/v1/posts/nope/comments', p.customer.token, { comment_body: 'x' })).status).toBe(404);
    const draft = await makePost(t, p.writer.token);
    expect((await req('POST', `/api/v1/posts/${draft.id}/comments`, p.customer.token, { comment_body: 'x' })).status).toBe(404);
    const other = await published(t, p.writer.token);
    expect((await req('POST', `/api/v1/posts/${other.id}/comments`, p.customer.token, { comment_body: 'x', parent_id: c1.body.data.id })).status).toBe(400);
    const list = await req('GET', url);
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: any) => c.comment_body)).toEqual(['First!', 'Reply']);
    expect(list.body.meta).toMatchObject({ total: 2, page: 1 });
    expect((await req('GET', `${url}?status=pending`, p.customer.token)).status).toBe(403);
    expect((await req('GET', `${url}?status=bogus`)).status).toBe(400);
  });

  it('when a comment is edited or deleted, then only its author edits, and its author, the post author or an admin deletes', async () => {
    const post = await published(t, p.writer.token);
    const c = (await req('POST', `/api/v1/posts/${post.id}/comments`, p.customer.token, { comment_body: 'mine' })).body.data;
    expect((await req('PUT', `/api/v1/posts/comments/${c.id}`, p.customer2.token, { comment_body: 'hijack' })).status).toBe(403);
    expect((await req('PUT', `/api/v1/posts/comments/${c.id}`, p.admin.token, { comment_body: 'hijack' })).status).toBe(403);
    expect((await req('PUT', `/api/v1/posts/comments/${c.id}`, p.customer.token, {})).status).toBe(400);
    expect((await req('PUT', '/api/v1/posts/comments/nope', p.customer.token, { comment_body: 'x' })).status).toBe(404);
    expect((await req('PUT', `/api/v1/posts/comments/${c.id}`, undefined, { comment_body: 'x' })).status).toBe(401);
    expect((await req('PUT', `/api/v1/posts/comments/${c.id}`, p.customer.token, { comment_body: 'edited' })).body.data.comment_body).toBe('edited');
    expect((await req('DELETE', `/api/v1/posts/comments/${c.id}`, p.customer2.token)).status).toBe(403);
    expect((await req('DELETE', `/api/v1/posts/comments/${c.id}`, p.writer.token)).status).toBe(200);
    expect((await req('DELETE', `/api/v1/posts/comments/${c.id}`, p.customer.token)).status).toBe(404);
    const list = await req('GET', `/api/v1/posts/${post.id}/comments`);
    expect(list.body.data).toEqual([expect.objectContaining({ id: c.id, status: 'deleted', comment_body: null })]);
  });

  it('when comments need approval, then they wait, and the post author or an admin moderates with action or status', async () => {
    await t.app.modules.hub.uninstall('blog');
    await t.app.modules.hub.install(['blog'], { config: { blog: { comments_require_approval: true } } });
    try {
      const post = await published(t, p.writer.token);
      const url = `/api/v1/posts/${post.id}/comments`;
      const c = (await req('POST', url, p.customer.token, { comment_body: 'please approve' })).body.data;
      expect(c.status).toBe('pending');
      expect((await req('GET', url)).body.data).toEqual([]);
      expect((await req('GET', url, p.customer.token)).body.data.map((x: any) => x.id)).toEqual([c.id]);
      expect((await req('GET', `${url}?status=pending`, p.writer.token)).body.data.map((x: any) => x.id)).toEqual([c.id]);
      const mod = (id: string, body: unknown, session?: string) => req('POST', `/api/v1/posts/comments/${id}/moderate`, session, body);
      expect((await mod(c.id, { action: 'approve' })).status).toBe(401);
      expect((await mod(c.id, { action: 'approve' }, p.customer.token)).status).toBe(403);
      expect((await mod(c.id, { action: 'approve' }, p.writer2.token)).status).toBe(403);
      expect((await mod(c.id, { action: 'bless' }, p.writer.token)).status).toBe(400);
      expect((await mod(c.id, {}, p.writer.token)).status).toBe(400);
      expect((await mod('nope', { action: 'approve' }, p.writer.token)).status).toBe(404);
      const ok = await mod(c.id, { action: 'approve' }, p.writer.token);
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ data: { id: c.id, status: 'approved' }, user_context: { authenticated: true, user_type: 'writer' }, meta: {} });
      expect((await req('GET', url)).body.data.map((x: any) => x.id)).toEqual([c.id]);
      const spam = await mod(c.id, { status: 'spam', reason: 'links' }, p.admin.token);
      expect(spam.body.data).toMatchObject({ status: 'spam', reason: 'links' });
      expect((await req('GET', url)).body.data).toEqual([]);
      expect((await mod(c.id, { action: 'reject' }, p.admin.token)).body.data.status).toBe('rejected');
    } finally {
      await t.app.modules.hub.uninstall('blog');
      await t.app.modules.hub.install(['blog'], { config: { blog: { comments_require_approval: false } } });
    }
  });

  it('when a user reacts, then one reaction per type counts, sending it again takes it back, and unknown types are refused', async () => {
    const post = await published(t, p.writer.token);
    const url = `/api/v1/posts/${post.id}/reactions`;
    const like = await req('POST', url, p.customer.token, { reaction_type: 'like' });
    expect(like.status).toBe(200);
    expect(like.body.data).toMatchObject({ reaction_type: 'like', active: true, counts: { like: 1 }, mine: ['like'] });
    await req('POST', url, p.customer2.token, { reaction_type: 'like' });
    await req('POST', url, p.customer.token, { reaction_type: 'love' });
    const summary = await req('GET', url);
    expect(summary.body.data).toMatchObject({ counts: { like: 2, love: 1 }, total: 3, mine: [] });
    const back = await req('POST', url, p.customer.token, { reaction_type: 'like' });
    expect(back.body.data).toMatchObject({ active: false, counts: { like: 1, love: 1 }, mine: ['love'] });
    const both = await Promise.all([1, 2, 3].map(() => req('POST', url, p.admin.token, { reaction_type: 'wow' })));
    expect(both.every((r) => r.status === 200)).toBe(true);
    const [row] = (await t.app.sequelize.query("SELECT COUNT(*) AS n FROM blog_reactions WHERE post_id = ? AND user_id = ? AND reaction_type = 'wow'", {
      replacements: [post.id, p.admin.id],
      type: 'SELECT' as any,
    })) as any[];
    expect(Number(row.n)).toBeLessThanOrEqual(1);
    expect((await req('POST', url, p.customer.token, { reaction_type: 'meh' })).status).toBe(400);
    expect((await req('POST', url, p.customer.token, { reaction_type: '<b>' })).status).toBe(400);
    expect((await req('POST', url, p.customer.token, {})).status).toBe(400);
    expect((await req('POST', url, undefined, { reaction_type: 'like' })).status).toBe(401);
    expect((await req('POST', '/api/v1/posts/nope/reactions', p.customer.token, { reaction_type: 'like' })).status).toBe(404);
  });

  it('when bookmarking, then the caller sees its own list, adding twice is harmless, and removing works', async () => {
    const a = await published(t, p.writer.token);
    const b = await published(t, p.writer.token);
    expect((await req('POST', `/api/v1/posts/${a.id}/bookmark`, p.customer.token)).body.data).toEqual({ post_id: a.id, bookmarked: true });
    expect((await req('POST', `/api/v1/posts/${a.id}/bookmark`, p.customer.token)).status).toBe(200);
    await req('POST', `/api/v1/posts/${b.id}/bookmark`, p.customer.token);
    const mine = await req('GET', '/api/v1/posts/bookmarks', p.customer.token);
    expect(mine.body.data.map((x: any) => x.id).sort()).toEqual([a.id, b.id].sort());
    expect((await req('GET', '/api/v1/posts/bookmarks', p.customer2.token)).body.data).toEqual([]);
    expect((await req('GET', '/api/v1/posts/bookmarks')).status).toBe(401);
    expect((await req('DELETE', `/api/v1/posts/${a.id}/bookmark`, p.customer.token)).body.data).toEqual({ post_id: a.id, bookmarked: false });
    expect((await req('GET', '/api/v1/posts/bookmarks', p.customer.token)).body.data.map((x: any) => x.id)).toEqual([b.id]);
    expect((await req('POST', `/api/v1/posts/${a.id}/bookmark`)).status).toBe(401);
    expect((await req('POST', '/api/v1/posts/nope/bookmark', p.customer.token)).status).toBe(404);
    expect((await req('DELETE', '/api/v1/posts/nope/bookmark', p.customer.token)).status).toBe(404);
    // A post that becomes private leaves the list of those who may no longer read it.
    await req('PUT', `/api/v1/posts/${b.id}`, p.writer.token, { visibility: 'private' });
    expect((await req('GET', '/api/v1/posts/bookmarks', p.customer.token)).body.data).toEqual([]);
  });

  it('when views are sent, then one network counts once a day even when sent at once, and stats add everything up', async () => {
    const post = await published(t, p.writer.token);
    const view = (session?: string, ua = 'agent-a') => req('POST', `/api/v1/posts/${post.id}/view`, session, undefined, { 'User-Agent': ua });
    const burst = await Promise.all([1, 2, 3, 4, 5].map(() => view(p.customer.token)));
    expect(burst.every((r) => r.status === 200)).toBe(true);
    expect(burst.filter((r) => r.body.data.counted)).toHaveLength(1);
    // The same network: another user, no user, another agent all count nothing more today.
    for (const r of [await view(p.customer2.token), await view(undefined, 'agent-a'), await view(undefined, 'agent-b')])
      expect(r.body.data.counted).toBe(false);
    // The next day it counts again.
    await t.app.sequelize.query("UPDATE blog_views SET view_day = '2000-01-01' WHERE post_id = ?", { replacements: [post.id] });
    expect((await view(p.customer.token)).body.data.counted).toBe(true);
    await req('POST', `/api/v1/posts/${post.id}/reactions`, p.customer.token, { reaction_type: 'like' });
    await req('POST', `/api/v1/posts/${post.id}/reactions`, p.customer2.token, { reaction_type: 'clap' });
    const cm = await req('POST', `/api/v1/posts/${post.id}/comments`, p.customer.token, { comment_body: 'nice' });
    expect(cm.status, cm.text).toBe(200);
    await req('POST', `/api/v1/posts/${post.id}/bookmark`, p.customer.token);
    const stats = await req('GET', `/api/v1/posts/${post.id}/stats`);
    expect(stats.status).toBe(200);
    expect(stats.body.data).toEqual({
      post_id: post.id,
      views: 2,
      unique_viewers: 1,
      reactions: { like: 1, clap: 1 },
      reactions_total: 2,
      comments: 1,
      bookmarks: 1,
    });
    const own = await req('GET', `/api/v1/posts/${post.id}/stats`, p.writer.token);
    expect(own.body.data.comments_pending).toBe(0);
    expect((await req('POST', '/api/v1/posts/nope/view')).status).toBe(404);
    expect((await req('GET', '/api/v1/posts/nope/stats')).status).toBe(404);
    const priv = await published(t, p.writer.token, { visibility: 'private' });
    expect((await req('POST', `/api/v1/posts/${priv.id}/view`)).status).toBe(404);
    expect((await req('GET', `/api/v1/posts/${priv.id}/stats`, p.customer.token)).status).toBe(404);
    const auth = await published(t, p.writer.token, { visibility: 'auth' });
    expect((await req('GET', `/api/v1/posts/${auth.id}/stats`)).status).toBe(401);
    expect((await req('GET', `/api/v1/posts/${auth.id}/reactions`)).status).toBe(401);
    expect((await req('GET', `/api/v1/posts/${auth.id}/comments`)).status).toBe(401);
    const [stored] = (await t.app.sequelize.query('SELECT viewer_key FROM blog_views WHERE post_id = ?', {
      replacements: [post.id],
      type: 'SELECT' as any,
    })) as any[];
    expect(stored.viewer_key).toMatch(/^[0-9a-f]{48}$/);
  });

  it('when a featured image is uploaded, then it is recognised by content, served with safe headers, and removable', async () => {
    const post = await published(t, p.writer.token);
    const upload = (bytes: Buffer, session = p.writer.token, field = 'image', id = post.id) => {
      const form = new FormData();
      form.append(field, new Blob([new Uint8Array(bytes)]), 'x.png');
      return t.request('POST', `/api/v1/posts/${id}/featured-image`, { session, raw: form });
    };
    const bad = await upload(Buffer.from('<svg onload="x()"></svg>'));
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('UNSUPPORTED_IMAGE');
    expect((await upload(png(), p.writer2.token)).status).toBe(403);
    expect((await upload(png(), p.customer.token)).status).toBe(403);
    expect((await upload(png(), '')).status).toBe(401);
    expect((await upload(png(), p.writer.token, 'image', 'nope')).status).toBe(404);
    expect((await upload(png(), p.writer.token, 'other')).status).toBe(400);
    expect((await req('POST', `/api/v1/posts/${post.id}/featured-image`, p.writer.token, { image: 'x' })).status).toBe(415);
    const ok = await upload(png(4, 5));
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ width: 4, height: 5, content_type: 'image/png' });
    const url = new URL(ok.body.data.featured_image_url);
    const img = await fetch(`${t.url}${url.pathname}`);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect(img.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await img.arrayBuffer()).equals(png(4, 5))).toBe(true);
    expect((await req('GET', `/api/v1/posts/id/${post.id}`)).body.data.featured_image).toBe(ok.body.data.featured_image_url);
    expect((await req('DELETE', `/api/v1/posts/${post.id}/featured-image`, p.customer.token)).status).toBe(403);
    expect((await req('DELETE', `/api/v1/posts/${post.id}/featured-image`, p.writer.token)).body.data.featured_image).toBeNull();
    expect((await fetch(`${t.url}${url.pathname}`)).status).toBe(404);
  });
});

describe(`blog comment changes at once (${BACKEND})`, () => {
  it('when a comment is edited while it is deleted, then a deleted comment never keeps a text', async () => {
    const post = await published(t, p.writer.token);
    for (let round = 0; round < 10; round++) {
      const c = (await req('POST', `/api/v1/posts/${post.id}/comments`, p.customer.token, { comment_body: `said ${round}` })).body.data;
      await Promise.all([
        req('DELETE', `/api/v1/posts/comments/${c.id}`, p.customer.token),
        req('PUT', `/api/v1/posts/comments/${c.id}`, p.customer.token, { comment_body: `changed ${round}` }),
      ]);
      const [row] = await t.app.sequelize.query('SELECT body, deleted_at FROM blog_comments WHERE id = ?', { replacements: [c.id], plain: false });
      expect(row, `round ${round}`).toEqual([expect.objectContaining({ body: '', deleted_at: expect.anything() })]);
    }
  });
});
