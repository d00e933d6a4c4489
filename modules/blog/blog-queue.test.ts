import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, people, published, startBlog, type TestApp } from './test/kit.js';

// The moderation queue across posts: GET /api/v1/posts/comments?status=pending (admins), keyset paged.
let t: TestApp;
let p: Awaited<ReturnType<typeof people>>;
beforeAll(async () => {
  t = await startBlog({ config: { comments_require_approval: true } });
  p = await people(t);
});
afterAll(async () => {
  await t?.close();
});

const queue = (session: string | undefined, query = '') => t.request('GET', `/api/v1/posts/comments${query}`, { session });
const comment = async (postId: string, token: string, text: string) => {
  const r = await t.request('POST', `/api/v1/posts/${postId}/comments`, { session: token, body: { comment_body: text } });
  expect(r.status).toBe(200);
  return r.body.data as { id: string; status: string };
};

describe(`the comment moderation queue (${BACKEND})`, () => {
  it('when comments wait on many posts, then an admin pages through all of them, oldest first, each with its post; approved and deleted ones leave it', async () => {
    // More posts than the console used to look at (the 10 newest), with a waiting comment on the oldest.
    const posts: Record<string, any>[] = [];
    for (let i = 0; i < 12; i++) posts.push(await published(t, p.writer.token, { title: `Queue post ${i}` }));
    const waiting: { id: string; status: string }[] = [];
    for (const post of posts) waiting.push(await comment(post.id, p.customer.token, `on ${post.title}`));
    expect(waiting.every((c) => c.status === 'pending')).toBe(true);

    const seen: { id: string; post: { id: string; title: string } }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await queue(p.admin.token, `?status=pending&limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(5);
      seen.push(...r.body.data);
      cursor = r.body.meta.next_cursor;
      expect(r.body.meta.hasMore).toBe(cursor !== null);
      pages++;
    } while (cursor && pages < 20);
    const ours = seen.filter((c) => waiting.some((x) => x.id === c.id));
    expect(ours.map((c) => c.id)).toEqual(waiting.map((c) => c.id));
    expect(new Set(seen.map((c) => c.id)).size).toBe(seen.length);
    expect(ours[0]).toMatchObject({ status: 'pending', post: { id: posts[0].id, title: 'Queue post 0' }, comment_body: 'on Queue post 0' });

    // Approved, deleted, and on a deleted post: no longer waiting.
    expect((await t.request('POST', `/api/v1/posts/comments/${waiting[0].id}/moderate`, { session: p.admin.token, body: { action: 'approve' } })).status).toBe(
      200,
    );
    expect((await t.request('DELETE', `/api/v1/posts/comments/${waiting[1].id}`, { session: p.admin.token })).status).toBe(200);
    expect((await t.request('DELETE', `/api/v1/posts/${posts[2].id}`, { session: p.admin.token })).status).toBe(200);
    const after = await queue(p.admin.token, '?limit=100');
    const ids = after.body.data.map((c: { id: string }) => c.id);
    for (const gone of waiting.slice(0, 3)) expect(ids).not.toContain(gone.id);
    expect(ids).toContain(waiting[3].id);
    const approved = await queue(p.admin.token, '?status=approved&limit=100');
    expect(approved.body.data.map((c: { id: string }) => c.id)).toContain(waiting[0].id);
  });

  it('when the caller is not an admin or the input is bad, then a clear 4xx', async () => {
    expect((await queue(undefined)).status).toBe(401);
    for (const who of [p.customer, p.writer]) {
      const r = await queue(who.token);
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
    }
    for (const q of [
      '?status=deleted',
      '?limit=0',
      '?limit=101',
      '?cursor=nonsense',
      `?cursor=${Buffer.from('2026-01-01T00:00:00.000Z|a|b').toString('base64url')}`,
    ]) {
      const r = await queue(p.admin.token, q);
      expect({ q, status: r.status, success: r.body.success }).toEqual({ q, status: 400, success: false });
    }
  });
});
