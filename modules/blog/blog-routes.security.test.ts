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

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** Every route with a post in its path, as [method, path template, body]. */
const POST_ROUTES: [string, string, unknown?][] = [
  ['GET', '/api/v1/posts/id/:id'],
  ['PUT', '/api/v1/posts/:id', { title: 'x' }],
  ['DELETE', '/api/v1/posts/:id'],
  ['POST', '/api/v1/posts/:id/publish'],
  ['POST', '/api/v1/posts/:id/unpublish'],
  ['POST', '/api/v1/posts/:id/schedule', { scheduled_at: new Date(Date.now() + 86400_000).toISOString() }],
  ['POST', '/api/v1/posts/:id/restore'],
  ['DELETE', '/api/v1/posts/:id/featured-image'],
  ['GET', '/api/v1/posts/:id/comments'],
  ['POST', '/api/v1/posts/:id/comments', { comment_body: 'x' }],
  ['GET', '/api/v1/posts/:id/reactions'],
  ['POST', '/api/v1/posts/:id/reactions', { reaction_type: 'like' }],
  ['POST', '/api/v1/posts/:id/bookmark'],
  ['DELETE', '/api/v1/posts/:id/bookmark'],
  ['POST', '/api/v1/posts/:id/view'],
  ['GET', '/api/v1/posts/:id/stats'],
  ['GET', '/api/v1/posts/id/:id/translations'],
  ['POST', '/api/v1/posts/id/:id/translations', { lang: 'fr', title: 't', body: 'b', excerpt: '' }],
  ['DELETE', '/api/v1/posts/id/:id/translations/fr'],
];
const OPEN = new Set([
  'GET /api/v1/posts/id/:id',
  'GET /api/v1/posts/:id/comments',
  'GET /api/v1/posts/:id/reactions',
  'POST /api/v1/posts/:id/view',
  'GET /api/v1/posts/:id/stats',
  'GET /api/v1/posts/id/:id/translations',
]);
const send = (method: string, path: string, id: string, session?: string, body?: unknown) => t.request(method, path.replace(':id', id), { session, body });

describe(`blog routes: sessions, roles, unknown ids and visibility (${BACKEND})`, () => {
  it('when a route needs a session and none is sent, then it is 401 with the error shape', async () => {
    const post = await published(t, p.writer.token);
    for (const [method, path, body] of POST_ROUTES) {
      if (OPEN.has(`${method} ${path}`)) continue;
      const r = await send(method, path, post.id, undefined, body);
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.body, `${method} ${path}`).toMatchObject({ success: false, error: expect.any(String), code: expect.any(String) });
    }
    for (const [method, path] of [
      ['GET', '/api/v1/posts/bookmarks'],
      ['POST', '/api/v1/posts/tags'],
      ['PUT', '/api/v1/posts/tags/x'],
      ['DELETE', '/api/v1/posts/tags/x'],
      ['PUT', '/api/v1/posts/comments/x'],
      ['DELETE', '/api/v1/posts/comments/x'],
      ['POST', '/api/v1/posts/comments/x/moderate'],
    ]) {
      expect((await t.request(method, path, { body: method === 'GET' || method === 'DELETE' ? undefined : { name: 'x' } })).status, `${method} ${path}`).toBe(
        401,
      );
    }
  });

  it('when a post id is unknown, then every route answers 404', async () => {
    for (const [method, path, body] of POST_ROUTES) {
      const r = await send(method, path, UNKNOWN, p.admin.token, body);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.success, `${method} ${path}`).toBe(false);
    }
    expect((await t.request('GET', `/api/v1/posts/images/${UNKNOWN}`)).status).toBe(404);
    expect((await t.request('GET', '/api/v1/posts/no-such-slug')).status).toBe(404);
  });

  it('when a customer or another writer uses an author route, then it is 403', async () => {
    const post = await published(t, p.writer.token);
    const authorOnly = POST_ROUTES.filter(([m, path]) => !OPEN.has(`${m} ${path}`) && !/comments$|reactions$|bookmark$/.test(path));
    for (const who of [p.customer, p.writer2]) {
      for (const [method, path, body] of authorOnly) {
        const r = await send(method, path, post.id, who.token, body);
        expect(r.status, `${who === p.customer ? 'customer' : 'writer2'} ${method} ${path}`).toBe(403);
      }
    }
  });

  it('when a post is private or a draft, then nobody but its author and admins reaches it through any route', async () => {
    const priv = await published(t, p.writer.token, { visibility: 'private' });
    const draft = await makePost(t, p.writer.token);
    const reader = POST_ROUTES.filter(([m, path]) => OPEN.has(`${m} ${path}`) || /comments$|reactions$|bookmark$/.test(path));
    for (const post of [priv, draft]) {
      for (const [method, path, body] of reader) {
        if (method === 'DELETE') continue;
        for (const session of [undefined, p.customer.token, p.writer2.token]) {
          if (!session && method !== 'GET' && !path.endsWith('/view')) continue;
          const r = await send(method, path, post.id, session, body);
          expect(r.status, `${post.status}/${post.visibility} ${method} ${path} ${session ? 'signed in' : 'anonymous'}`).toBe(404);
        }
      }
    }
    expect((await send('GET', '/api/v1/posts/:id/stats', priv.id, p.writer.token)).status).toBe(200);
    expect((await send('GET', '/api/v1/posts/id/:id/translations', priv.id, p.admin.token)).status).toBe(200);
    // Engaging needs a published post, even for its author.
    expect((await send('POST', '/api/v1/posts/:id/comments', draft.id, p.writer.token, { comment_body: 'x' })).status).toBe(400);
  });

  it('when a password post is used, then every read path needs the password', async () => {
    const post = await published(t, p.writer.token, { visibility: 'password', password: 'letmein' });
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(png())]), 'x.png');
    const img = await t.request('POST', `/api/v1/posts/${post.id}/featured-image`, { session: p.writer.token, raw: form });
    const imagePath = new URL(img.body.data.featured_image_url).pathname;
    const paths = [
      `/api/v1/posts/id/${post.id}`,
      `/api/v1/posts/${post.slug}`,
      `/api/v1/posts/${post.id}/comments`,
      `/api/v1/posts/${post.id}/reactions`,
      `/api/v1/posts/${post.id}/stats`,
      `/api/v1/posts/id/${post.id}/translations`,
      imagePath,
    ];
    for (const path of paths) {
      expect((await t.request('GET', path)).status, path).toBe(403);
      expect((await t.request('GET', path, { headers: { 'X-Post-Password': 'nope' } })).status, path).toBe(403);
      expect((await t.request('GET', path, { headers: { 'X-Post-Password': 'letmein' } })).status, path).toBe(200);
    }
    expect((await t.request('GET', `/api/v1/posts/${post.slug}?password=letmein`)).status).toBe(200);
    expect((await t.request('POST', `/api/v1/posts/${post.id}/comments`, { session: p.customer.token, body: { comment_body: 'x' } })).status).toBe(403);
    expect(
      (await t.request('POST', `/api/v1/posts/${post.id}/comments`, { session: p.customer.token, body: { comment_body: 'x', post_password: 'letmein' } }))
        .status,
    ).toBe(200);
  });

  it('when tags are changed, then only admins rename and delete them; bad bodies and unknown ids are refused', async () => {
    const tag = (await t.request('POST', '/api/v1/posts/tags', { session: p.writer.token, body: { name: `Tag ${Date.now()}` } })).body.data;
    expect((await t.request('PUT', `/api/v1/posts/tags/${tag.id}`, { session: p.writer.token, body: { name: 'y' } })).status).toBe(403);
    expect((await t.request('DELETE', `/api/v1/posts/tags/${tag.id}`, { session: p.customer.token })).status).toBe(403);
    expect((await t.request('PUT', `/api/v1/posts/tags/${tag.id}`, { session: p.admin.token, body: { slug: 'Bad Slug' } })).status).toBe(400);
    expect((await t.request('PUT', `/api/v1/posts/tags/${UNKNOWN}`, { session: p.admin.token, body: { name: 'y' } })).status).toBe(404);
    expect((await t.request('DELETE', `/api/v1/posts/tags/${UNKNOWN}`, { session: p.admin.token })).status).toBe(404);
    expect((await t.request('POST', '/api/v1/posts/tags', { session: p.writer.token, body: { name: 'x', color: 'red' } })).status).toBe(400);
    expect((await t.request('DELETE', `/api/v1/posts/tags/${tag.id}`, { session: p.admin.token })).status).toBe(200);
  });

  it('when translations are deleted, then only the author or an admin may, and unknown languages are 404', async () => {
    const post = await published(t, p.writer.token);
    await t.request('POST', `/api/v1/posts/id/${post.id}/translations`, {
      session: p.writer.token,
      body: { lang: 'it', title: 'Ciao', body: 'Ciao', excerpt: '' },
    });
    expect((await t.request('DELETE', `/api/v1/posts/id/${post.id}/translations/it`, { session: p.writer2.token })).status).toBe(403);
    expect((await t.request('DELETE', `/api/v1/posts/id/${post.id}/translations/xx-!!`, { session: p.writer.token })).status).toBe(400);
    expect((await t.request('DELETE', `/api/v1/posts/id/${post.id}/translations/de`, { session: p.writer.token })).status).toBe(404);
    expect((await t.request('DELETE', `/api/v1/posts/id/${post.id}/translations/it`, { session: p.writer.token })).status).toBe(200);
    expect((await t.request('GET', `/api/v1/posts/id/${post.id}/translations`)).body.data).toEqual([]);
  });

  it('when bodies are not JSON or queries are malformed, then the answer is a 4xx, never a 500', async () => {
    const post = await published(t, p.writer.token);
    const raw = await t.request('POST', '/api/v1/posts', {
      session: p.writer.token,
      raw: 'title=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(raw.status).toBe(415);
    const broken = await t.request('POST', '/api/v1/posts', { session: p.writer.token, raw: '{"title":', headers: { 'Content-Type': 'application/json' } });
    expect(broken.status).toBe(400);
    for (const qs of ['page=-1', 'limit=abc', 'q=' + 'x'.repeat(201), 'category=' + 'x'.repeat(121)]) {
      expect((await t.request('GET', `/api/v1/posts?${qs}`)).status, qs).toBe(400);
    }
    expect((await t.request('GET', '/api/v1/posts/bookmarks?page=0', { session: p.customer.token })).status).toBe(400);
    expect((await t.request('GET', `/api/v1/posts/${post.id}/comments?limit=0`)).status).toBe(400);
    expect((await t.request('GET', `/api/v1/posts/${'x'.repeat(300)}`)).status).toBe(400);
    expect((await t.request('PUT', `/api/v1/posts/${post.id}`, { session: p.writer.token, body: { status: 'archived' } })).body.data.status).toBe('archived');
    expect((await t.request('GET', `/api/v1/posts/id/${post.id}`)).status).toBe(404);
  });
});
