import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, people, startBlog, type TestApp } from './test/kit.js';

/**
 * The blog calls of the real client (@pubflow/core BlogClient, contract §2.13), sent as it sends them
 * (base `/api/v1/posts`, X-Session-ID, JSON) and decoded as it decodes them: on 2xx `data ?? body`,
 * `meta`, `user_context`; otherwise `error`.
 */
function blogClient(t: TestApp, session?: string) {
  const base = `${t.url}/api/v1/posts`;
  async function call(method: string, path: string, body?: unknown) {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (session) headers['X-Session-ID'] = session;
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'include' });
    const json: any = res.headers.get('content-type')?.includes('application/json') ? await res.json() : await res.text();
    if (!res.ok) return { success: false as const, status: res.status, error: json.error || json.message || 'Unknown error occurred' };
    return { success: true as const, status: res.status, data: json.data ?? json, meta: json.meta || json.pagination, userContext: json.user_context };
  }
  const qs = (q: Record<string, string | number>) =>
    Object.entries(q)
      .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
      .join('&');
  return {
    listPosts: (q: Record<string, string | number> = {}) => call('GET', `/?${qs(q)}`),
    createPost: (b: unknown) => call('POST', '', b),
    getPost: (id: string) => call('GET', `/id/${id}`),
    getPostBySlug: (slug: string) => call('GET', `/${slug}`),
    updatePost: (id: string, b: unknown) => call('PUT', `/${id}`, b),
    publishPost: (id: string) => call('POST', `/${id}/publish`),
    unpublishPost: (id: string) => call('POST', `/${id}/unpublish`),
    schedulePost: (id: string, scheduled_at: string) => call('POST', `/${id}/schedule`, { scheduled_at }),
    getCategories: () => call('GET', '/categories'),
    createCategory: (b: unknown) => call('POST', '/categories', b),
    getTags: () => call('GET', '/tags'),
    createTag: (b: unknown) => call('POST', '/tags', b),
    getComments: (postId: string) => call('GET', `/${postId}/comments`),
    createComment: (postId: string, comment_body: string) => call('POST', `/${postId}/comments`, { comment_body }),
    getReactions: (postId: string) => call('GET', `/${postId}/reactions`),
    addReaction: (postId: string, reaction_type: string) => call('POST', `/${postId}/reactions`, { reaction_type }),
    bookmark: (postId: string) => call('POST', `/${postId}/bookmark`),
    removeBookmark: (postId: string) => call('DELETE', `/${postId}/bookmark`),
    recordView: (postId: string) => call('POST', `/${postId}/view`),
    getStats: (postId: string) => call('GET', `/${postId}/stats`),
    getTranslations: (postId: string) => call('GET', `/id/${postId}/translations`),
  };
}

let t: TestApp;
beforeAll(async () => {
  t = await startBlog();
});
afterAll(async () => {
  await t?.close();
});

describe(`blog: the real client's 21 calls (${BACKEND})`, () => {
  it('when a writer and a reader use every client call, then each succeeds and decodes as the client expects', async () => {
    const p = await people(t);
    const writer = blogClient(t, p.writer.token);
    const reader = blogClient(t, p.customer.token);
    const anon = blogClient(t);
    const stamp = Date.now().toString(36);

    const cat = await writer.createCategory({ name: `Guides ${stamp}` });
    expect(cat).toMatchObject({ success: true, data: { slug: `guides-${stamp}` } });
    const tag = await writer.createTag({ name: `howto ${stamp}` });
    expect(tag.success).toBe(true);
    expect((await anon.getCategories()).data.some((c: any) => c.id === cat.data.id)).toBe(true);
    expect((await anon.getTags()).data.some((c: any) => c.id === tag.data.id)).toBe(true);

    const created = await writer.createPost({
      title: `Client post ${stamp}`,
      body: 'Body',
      excerpt: 'Ex',
      status: 'draft',
      visibility: 'public',
      lang: 'en',
      metadata: { a: 1 },
      categories: [cat.data.id],
      tags: [tag.data.slug],
    });
    expect(created.success).toBe(true);
    const id = created.data.id as string;
    expect(created.data).toMatchObject({
      id,
      slug: `client-post-${stamp}`,
      title: `Client post ${stamp}`,
      body: 'Body',
      excerpt: 'Ex',
      status: 'draft',
      visibility: 'public',
      lang: 'en',
      metadata: { a: 1 },
    });
    expect(created.userContext).toMatchObject({ authenticated: true, user_type: 'writer' });

    expect((await writer.getPost(id)).data.id).toBe(id);
    expect((await writer.updatePost(id, { title: `Client post ${stamp} v2` })).data.title).toBe(`Client post ${stamp} v2`);
    expect((await writer.schedulePost(id, new Date(Date.now() + 86400_000).toISOString())).data.status).toBe('scheduled');
    expect((await writer.publishPost(id)).data.status).toBe('published');
    expect((await writer.unpublishPost(id)).data.status).toBe('draft');
    expect((await anon.getPostBySlug(created.data.slug)).success).toBe(false);
    await writer.publishPost(id);
    expect((await anon.getPostBySlug(created.data.slug)).data.id).toBe(id);

    const list = await anon.listPosts({ lang: 'en', category: cat.data.slug });
    expect(list.success).toBe(true);
    expect(list.data.map((x: any) => x.id)).toEqual([id]);
    expect(list.meta).toMatchObject({ page: 1, limit: 20, total: 1, hasMore: false });
    expect(list.userContext).toMatchObject({ authenticated: false });

    expect((await reader.createComment(id, 'Great')).data).toMatchObject({ comment_body: 'Great' });
    expect((await anon.getComments(id)).data.map((c: any) => c.comment_body)).toEqual(['Great']);
    expect((await reader.addReaction(id, 'like')).data).toMatchObject({ active: true });
    expect((await anon.getReactions(id)).data.counts).toEqual({ like: 1 });
    expect((await reader.bookmark(id)).data.bookmarked).toBe(true);
    expect((await reader.removeBookmark(id)).data.bookmarked).toBe(false);
    expect((await anon.recordView(id)).data.counted).toBe(true);
    expect((await anon.getStats(id)).data).toMatchObject({ views: 1, comments: 1, reactions: { like: 1 }, bookmarks: 0 });
    await t.request('POST', `/api/v1/posts/id/${id}/translations`, {
      session: p.writer.token,
      body: { lang: 'fr', title: 'Bonjour', body: 'Corps', excerpt: 'Ex' },
    });
    expect((await anon.getTranslations(id)).data.map((x: any) => x.lang)).toEqual(['fr']);

    // Errors reach the client as a string it shows.
    const refused = await reader.createPost({ title: 'nope' });
    expect(refused).toMatchObject({ success: false, status: 403 });
    expect(typeof refused.error).toBe('string');
  });

  it('when a session is invalid on an open read, then the reader is treated as anonymous; on a write it is 401', async () => {
    const ghost = blogClient(t, 'ses_not-a-real-session');
    const list = await ghost.listPosts();
    expect(list.success).toBe(true);
    expect(list.userContext).toMatchObject({ authenticated: false });
    expect(await ghost.createPost({ title: 'x' })).toMatchObject({ success: false, status: 401, error: 'Invalid session' });
  });

  it('when a cookie session sends a state change from another site, then it is refused', async () => {
    const p = await people(t);
    const post = await blogClient(t, p.writer.token).createPost({ title: 'csrf target', status: 'published' });
    const cross = await fetch(`${t.url}/api/v1/posts/${post.data.id}/view`, {
      method: 'POST',
      headers: { Cookie: `session_id=${p.customer.token}`, Origin: 'https://evil.example' },
    });
    expect(cross.status).toBe(403);
    const crossWrite = await fetch(`${t.url}/api/v1/posts/${post.data.id}/bookmark`, {
      method: 'POST',
      headers: { Cookie: `session_id=${p.customer.token}`, Origin: 'https://evil.example' },
    });
    expect(crossWrite.status).toBe(403);
  });
});
