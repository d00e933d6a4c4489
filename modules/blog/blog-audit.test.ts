import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, makePost, people, startBlog, type TestApp } from './test/kit.js';

/** An event as core's record answers it (the module API exports no audit types; tests read core's list). */
type AuditEvent = Awaited<ReturnType<TestApp['app']['services']['audit']['list']>>['events'][number];

let t: TestApp;
let who: Awaited<ReturnType<typeof people>>;
let refuse = false;
beforeAll(async () => {
  t = await startBlog();
  who = await people(t);
  // A failing step of the post's unit of work after its event was written.
  t.app.services.audit.onRecord(async (e) => {
    if (refuse && e.type.startsWith('blog.')) throw new Error('outbox down');
  });
});
afterAll(async () => {
  await t?.close();
});

async function postEvents(postId: string): Promise<AuditEvent[]> {
  const { events } = await t.app.services.audit.list({ types: ['blog.*'], limit: 200 });
  return events.filter((e) => e.details.post_id === postId).reverse();
}
const send = (method: 'POST' | 'DELETE' | 'PUT', path: string, token: string, requestId: string, body?: unknown) =>
  t.request(method, path, { session: token, headers: { 'X-Request-ID': requestId }, body });

describe(`blog security events (${BACKEND})`, () => {
  it('when a writer publishes their post and an admin deletes it, then each is recorded about the author with who did it', async () => {
    const post = await makePost(t, who.writer.token, { title: 'Quietly secret title' });
    expect((await send('POST', `/api/v1/posts/${post.id}/publish`, who.writer.token, 'req-publish-1')).status).toBe(200);
    // Publishing what is live already is no new event.
    expect((await send('POST', `/api/v1/posts/${post.id}/publish`, who.writer.token, 'req-publish-2')).status).toBe(200);
    expect((await send('DELETE', `/api/v1/posts/${post.id}`, who.admin.token, 'req-delete-1')).status).toBe(200);

    const events = await postEvents(post.id);
    expect(events.map((e) => [e.type, e.actor, e.user_id, e.request_id, e.details])).toEqual([
      [
        'blog.post_published',
        { id: who.writer.id, user_type: 'writer' },
        who.writer.id,
        'req-publish-1',
        { post_id: post.id, post_type: 'post', by_author: true },
      ],
      ['blog.post_deleted', { id: who.admin.id, user_type: 'admin' }, who.writer.id, 'req-delete-1', { post_id: post.id, post_type: 'post', by_author: false }],
    ]);
    for (const e of events) expect(e.ip).toMatch(/127\.0\.0\.1|::1/);
    expect(JSON.stringify(events)).not.toContain('Quietly secret title');
  });

  it('when a post is created live or a draft is updated to published, then that is a publication too', async () => {
    const live = await makePost(t, who.writer.token, { status: 'published' });
    expect((await postEvents(live.id)).map((e) => e.type)).toEqual(['blog.post_published']);
    const draft = await makePost(t, who.writer.token);
    expect(await postEvents(draft.id)).toEqual([]);
    expect((await send('PUT', `/api/v1/posts/${draft.id}`, who.admin.token, 'req-update-live', { status: 'published' })).status).toBe(200);
    expect((await postEvents(draft.id)).map((e) => [e.type, e.details.by_author])).toEqual([['blog.post_published', false]]);
  });

  it("when the post's unit of work fails after its event was written, then the post is unchanged and no event remains", async () => {
    const post = await makePost(t, who.writer.token);
    refuse = true;
    try {
      expect((await send('POST', `/api/v1/posts/${post.id}/publish`, who.writer.token, 'req-publish-fails')).status).toBe(500);
      expect((await send('DELETE', `/api/v1/posts/${post.id}`, who.admin.token, 'req-delete-fails')).status).toBe(500);
    } finally {
      refuse = false;
    }
    const [row] = await t.app.sequelize.query(`SELECT status, deleted_at FROM blog_posts WHERE id = '${post.id}'`, { plain: false });
    expect(row).toEqual([{ status: 'draft', deleted_at: null }]);
    expect(await postEvents(post.id)).toEqual([]);
  });
});
