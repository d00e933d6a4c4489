import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, makePost, people, published, startBlog, type TestApp } from './test/kit.js';

let t: TestApp;
let p: Awaited<ReturnType<typeof people>>;
beforeAll(async () => {
  // Room for the longest bodies (the default JSON limit is 100kb).
  t = await startBlog({ env: { BODY_LIMIT: '1mb' } });
  p = await people(t);
});
afterAll(async () => {
  await t?.close();
});

const get = (path: string, session?: string, headers?: Record<string, string>) => t.request('GET', path, { session, headers });

describe(`blog posts (${BACKEND})`, () => {
  it('when a writer creates a post, then it is a draft with a slug, sanitised HTML, an excerpt and the module envelope', async () => {
    const r = await t.request('POST', '/api/v1/posts', {
      session: p.writer.token,
      body: { title: 'Hello World, again!', body: '# Hi\n\n<script>alert(1)</script> [x](javascript:alert(1)) **bold**', metadata: { seo: 'yes' } },
    });
    expect(r.status).toBe(200);
    const d = r.body.data;
    expect(d).toMatchObject({
      slug: 'hello-world-again',
      status: 'draft',
      visibility: 'public',
      lang: 'en',
      body_format: 'markdown',
      metadata: { seo: 'yes' },
      author_id: p.writer.id,
    });
    expect(d.body_html).toContain('<strong>bold</strong>');
    expect(d.body_html).not.toContain('<script');
    expect(d.body_html).not.toMatch(/href="javascript/i);
    expect(d.excerpt).toContain('bold');
    expect(r.body.user_context).toMatchObject({ authenticated: true, user_type: 'writer', user_id: p.writer.id, can: { edit: true, publish: true } });
    expect(r.body.meta).toEqual({ created: true });
    const again = await makePost(t, p.writer.token, { title: 'Hello World, again!' });
    expect(again.slug).toBe('hello-world-again-2');
  });

  it('when HTML bodies carry event handlers or javascript: URLs, then the rendered HTML has none', async () => {
    const d = await makePost(t, p.writer.token, {
      body_format: 'html',
      body: '<p onclick="x()">hi</p><img src="javascript:alert(1)" onerror="y()"><a href="JaVaScRiPt:alert(1)">a</a><iframe src="https://e.test"></iframe><a href="https://ok.test">ok</a>',
    });
    expect(d.body_html).not.toMatch(/onclick|onerror|javascript|iframe/i);
    expect(d.body_html).toContain('href="https://ok.test"');
    const plain = await makePost(t, p.writer.token, { body_format: 'plain', body: '<b>not bold</b>\n\nsecond' });
    expect(plain.body_html).toBe('<p>&lt;b&gt;not bold&lt;/b&gt;</p>\n<p>second</p>');
  });

  it('when create input is bad, then 400 names the field; without a session 401; a customer 403', async () => {
    const bad = [
      {},
      { title: '' },
      { title: 'x', status: 'live' },
      { title: 'x', visibility: 'secret' },
      { title: 'x', visibility: 'password' },
      { title: 'x', status: 'scheduled' },
      { title: 'x', status: 'scheduled', scheduled_at: '2001-01-01T00:00:00Z' },
      { title: 'x', slug: 'Not A Slug' },
      { title: 'x', slug: 'categories' },
      { title: 'x', lang: 'english!' },
      { title: 'x', body_format: 'docx' },
      { title: 'x', categories: ['no-such-category'] },
      { title: 'x', unknown_field: 1 },
      { title: 'x', metadata: 'nope' },
    ];
    for (const body of bad) {
      const r = await t.request('POST', '/api/v1/posts', { session: p.writer.token, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toMatchObject({ success: false });
      expect(typeof r.body.error).toBe('string');
    }
    expect((await t.request('POST', '/api/v1/posts', { body: { title: 'x' } })).status).toBe(401);
    const c = await t.request('POST', '/api/v1/posts', { session: p.customer.token, body: { title: 'x' } });
    expect(c.status).toBe(403);
    expect(c.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
    const dup = await makePost(t, p.writer.token, { slug: 'taken-slug' });
    const taken = await t.request('POST', '/api/v1/posts', { session: p.writer.token, body: { title: 'y', slug: dup.slug } });
    expect(taken.status).toBe(400);
    expect(taken.body.code).toBe('SLUG_TAKEN');
    // Unique per language: the same slug in another language is fine.
    expect((await t.request('POST', '/api/v1/posts', { session: p.writer.token, body: { title: 'y', slug: dup.slug, lang: 'fr' } })).status).toBe(200);
  });

  it('when a post is read, then each visibility answers only to those it allows, on every read path', async () => {
    const tag = `vis${Date.now()}`;
    const mk = (visibility: string, extra: Record<string, unknown> = {}) =>
      published(t, p.writer.token, { title: `${tag} ${visibility} words`, visibility, tags: [tag], ...extra });
    const pub = await mk('public');
    const auth = await mk('auth');
    const priv = await mk('private');
    const pw = await mk('password', { password: 'open sesame' });
    const draft = await makePost(t, p.writer.token, { title: `${tag} draft words`, tags: [tag] });

    const bySlug = async (post: any, session?: string, headers?: Record<string, string>) => (await get(`/api/v1/posts/${post.slug}`, session, headers)).status;
    const byId = async (post: any, session?: string) => (await get(`/api/v1/posts/id/${post.id}`, session)).status;
    expect(await bySlug(pub)).toBe(200);
    expect(await bySlug(auth)).toBe(401);
    expect(await bySlug(auth, p.customer.token)).toBe(200);
    expect(await bySlug(priv, p.customer.token)).toBe(404);
    expect(await bySlug(priv, p.writer.token)).toBe(200);
    expect(await bySlug(priv, p.admin.token)).toBe(200);
    expect(await byId(priv, p.writer2.token)).toBe(404);
    expect(await byId(draft)).toBe(404);
    expect(await byId(draft, p.customer.token)).toBe(404);
    expect(await byId(draft, p.writer.token)).toBe(200);
    const noPw = await get(`/api/v1/posts/${pw.slug}`);
    expect(noPw.status).toBe(403);
    expect(noPw.body.code).toBe('POST_PASSWORD_REQUIRED');
    expect(await bySlug(pw, undefined, { 'X-Post-Password': 'wrong' })).toBe(403);
    const ok = await get(`/api/v1/posts/${pw.slug}`, undefined, { 'X-Post-Password': 'open sesame' });
    expect(ok.status).toBe(200);
    expect(ok.body.data.body).toBe('Hello **world**');
    expect(ok.text).not.toContain('password_hash');
    expect(ok.text).not.toContain('$2');

    const listed = async (session?: string, qs = `tag=${tag}`) => ((await get(`/api/v1/posts/?${qs}`, session)).body.data as any[]).map((x) => x.id).sort();
    expect(await listed()).toEqual([pub.id].sort());
    expect(await listed(p.customer.token)).toEqual([pub.id, auth.id].sort());
    expect(await listed(p.writer.token)).toEqual([pub.id, auth.id, priv.id, pw.id].sort());
    expect(await listed(p.admin.token)).toEqual([pub.id, auth.id, priv.id, pw.id].sort());
    expect(await listed(undefined, `q=${tag}`)).toEqual([pub.id]);
    expect(await listed(p.customer.token, `q=${tag}`)).toEqual([pub.id, auth.id].sort());
    expect(await listed(p.writer.token, `tag=${tag}&status=draft`)).toEqual([draft.id]);
    expect(await listed(p.writer2.token, `tag=${tag}&status=draft`)).toEqual([]);
    expect((await get(`/api/v1/posts?tag=${tag}&status=draft`)).status).toBe(400);

    for (const feed of ['/api/v1/posts/sitemap.xml', '/api/v1/posts/feed.xml']) {
      const r = await get(feed);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/xml/);
      expect(r.text).toContain(pub.slug);
      for (const hidden of [auth, priv, pw, draft]) expect(r.text, feed).not.toContain(hidden.slug);
    }
  });

  it('when the real client lists with a slash before the query, then it gets the page with pagination meta', async () => {
    const tag = `page${Date.now()}`;
    for (let i = 0; i < 5; i++) await published(t, p.writer.token, { title: `Paged ${i} ${tag}`, tags: [tag] });
    const r = await get(`/api/v1/posts/?lang=en&tag=${tag}&limit=2&page=2`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(r.body.data).toHaveLength(2);
    expect(r.body.meta).toEqual({ page: 2, limit: 2, total: 5, pages: 3, hasMore: true });
    expect(r.body.user_context).toMatchObject({ authenticated: false, user_type: null, user_id: null, can: { create: false } });
    expect(r.body.data[0]).not.toHaveProperty('body');
    for (const qs of ['page=0', 'limit=1000', 'page=x', 'status=nope', 'lang=!!', 'q=', 'q=%21%21%21']) {
      const bad = await get(`/api/v1/posts?${qs}`);
      expect(bad.status, qs).toBe(400);
      expect(bad.body.success).toBe(false);
    }
  });

  it('when searching, then matches in title rank above matches in body, on this backend', async () => {
    const word = `zebra${Date.now().toString(36)}`;
    const inBody = await published(t, p.writer.token, { title: 'Body only', body: `A text about the ${word} herd.` });
    const inTitle = await published(t, p.writer.token, { title: `The ${word} story`, body: 'nothing here' });
    const r = await get(`/api/v1/posts?q=${word}`);
    expect(r.status).toBe(200);
    expect(r.body.data.map((x: any) => x.id)).toEqual([inTitle.id, inBody.id]);
    const quoted = await get(`/api/v1/posts?q=${encodeURIComponent(`"${word}" OR NEAR(`)}`);
    expect(quoted.status).toBe(200);
    // A body near the size limit, every word different, still saves and is found.
    const huge = Array.from({ length: 45_000 }, (_, i) => `w${i.toString(36)}x`).join(' ');
    const big = await published(t, p.writer.token, { title: 'Big one', body: `${word}big ${huge}` });
    expect((await get(`/api/v1/posts?q=${word}big`)).body.data.map((x: any) => x.id)).toEqual([big.id]);
  });

  it('when a writer edits, renames and deletes, then old slugs still answer, others may not touch it, and an admin restores', async () => {
    const post = await published(t, p.writer.token, { title: 'Original title' });
    const put = (id: string, body: unknown, session = p.writer.token) => t.request('PUT', `/api/v1/posts/${id}`, { session, body });
    expect((await put(post.id, { title: 'Nope' }, p.writer2.token)).status).toBe(403);
    expect((await put(post.id, { title: 'Nope' }, p.customer.token)).status).toBe(403);
    expect((await t.request('PUT', `/api/v1/posts/${post.id}`, { body: { title: 'Nope' } })).status).toBe(401);
    expect((await put('00000000-0000-0000-0000-000000000000', { title: 'x' })).status).toBe(404);
    expect((await put(post.id, {})).status).toBe(400);
    expect((await put(post.id, { slug: 'bad slug' })).status).toBe(400);
    const r = await put(post.id, { title: 'Renamed', slug: 'renamed-post-' + Date.now(), body: 'new *body*' });
    expect(r.status).toBe(200);
    expect(r.body.data.body_html).toContain('<em>body</em>');
    const old = await get(`/api/v1/posts/${post.slug}`);
    expect(old.status).toBe(200);
    expect(old.body.data.id).toBe(post.id);
    expect(old.body.meta.redirect_to).toBe(r.body.data.slug);
    expect((await put(post.id, { title: 'admin edit' }, p.admin.token)).status).toBe(200);

    expect((await t.request('DELETE', `/api/v1/posts/${post.id}`, { session: p.writer2.token })).status).toBe(403);
    expect((await t.request('DELETE', `/api/v1/posts/${post.id}`, { session: p.writer.token })).status).toBe(200);
    expect((await get(`/api/v1/posts/id/${post.id}`, p.writer.token)).status).toBe(404);
    expect((await t.request('DELETE', `/api/v1/posts/${post.id}`, { session: p.writer.token })).status).toBe(404);
    expect((await t.request('POST', `/api/v1/posts/${post.id}/restore`, { session: p.writer.token })).status).toBe(403);
    const deleted = await get('/api/v1/posts?status=deleted', p.admin.token);
    expect(deleted.body.data.map((x: any) => x.id)).toContain(post.id);
    const restored = await t.request('POST', `/api/v1/posts/${post.id}/restore`, { session: p.admin.token });
    expect(restored.status).toBe(200);
    expect(restored.body.data.deleted_at).toBeNull();
    expect((await t.request('POST', `/api/v1/posts/${post.id}/restore`, { session: p.admin.token })).status).toBe(400);
    expect((await get(`/api/v1/posts/id/${post.id}`)).status).toBe(200);
  });

  it('when publishing, unpublishing and scheduling, then the status follows and bad dates are refused', async () => {
    const post = await makePost(t, p.writer.token);
    const act = (what: string, body?: unknown, session = p.writer.token) => t.request('POST', `/api/v1/posts/${post.id}/${what}`, { session, body });
    expect((await act('publish', undefined, p.customer.token)).status).toBe(403);
    expect((await act('publish', undefined, p.writer2.token)).status).toBe(403);
    expect((await t.request('POST', '/api/v1/posts/nope/publish', { session: p.writer.token })).status).toBe(404);
    const pub = await act('publish');
    expect(pub.body.data).toMatchObject({ status: 'published' });
    expect(pub.body.data.published_at).toBeTruthy();
    expect((await act('unpublish')).body.data.status).toBe('draft');
    for (const body of [
      {},
      { scheduled_at: 'tomorrow' },
      { scheduled_at: '2000-01-01T00:00:00Z' },
      { scheduled_at: new Date(Date.now() + 60_000).toISOString(), x: 1 },
    ]) {
      expect((await act('schedule', body)).status, JSON.stringify(body)).toBe(400);
    }
    const when = new Date(Date.now() + 3600_000).toISOString();
    const s = await act('schedule', { scheduled_at: when });
    expect(s.status).toBe(200);
    expect(s.body.data).toMatchObject({ status: 'scheduled', scheduled_at: when });
    expect((await get(`/api/v1/posts/id/${post.id}`)).status).toBe(404);
  });

  it('when categories and tags are managed, then slugs are unique, writers create, admins rename and delete', async () => {
    const slug = `news-${Date.now()}`;
    expect((await t.request('POST', '/api/v1/posts/categories', { session: p.customer.token, body: { name: 'News' } })).status).toBe(403);
    expect((await t.request('POST', '/api/v1/posts/categories', { body: { name: 'News' } })).status).toBe(401);
    expect((await t.request('POST', '/api/v1/posts/categories', { session: p.writer.token, body: { name: '' } })).status).toBe(400);
    const c = await t.request('POST', '/api/v1/posts/categories', { session: p.writer.token, body: { name: 'News', slug } });
    expect(c.status).toBe(200);
    const dup = await t.request('POST', '/api/v1/posts/categories', { session: p.writer.token, body: { name: 'News 2', slug } });
    expect(dup.status).toBe(400);
    expect(dup.body.code).toBe('SLUG_TAKEN');
    const post = await published(t, p.writer.token, { categories: [slug], tags: ['Fresh Tag'] });
    expect(post.categories.map((x: any) => x.slug)).toEqual([slug]);
    expect(post.tags.map((x: any) => x.slug)).toEqual(['fresh-tag']);
    const list = await get('/api/v1/posts/categories');
    expect(list.body.data.find((x: any) => x.slug === slug)).toMatchObject({ name: 'News', post_count: 1 });
    expect((await get(`/api/v1/posts?category=${slug}`)).body.data.map((x: any) => x.id)).toEqual([post.id]);
    const id = c.body.data.id;
    expect((await t.request('PUT', `/api/v1/posts/categories/${id}`, { session: p.writer.token, body: { name: 'X' } })).status).toBe(403);
    expect((await t.request('PUT', `/api/v1/posts/categories/${id}`, { session: p.admin.token, body: {} })).status).toBe(400);
    expect((await t.request('PUT', '/api/v1/posts/categories/nope', { session: p.admin.token, body: { name: 'X' } })).status).toBe(404);
    expect((await t.request('PUT', `/api/v1/posts/categories/${id}`, { session: p.admin.token, body: { name: 'Renamed' } })).body.data.name).toBe('Renamed');
    expect((await t.request('DELETE', `/api/v1/posts/categories/${id}`, { session: p.admin.token })).status).toBe(200);
    expect((await t.request('DELETE', `/api/v1/posts/categories/${id}`, { session: p.admin.token })).status).toBe(404);
    expect((await get(`/api/v1/posts/id/${post.id}`)).body.data.categories).toEqual([]);
    const tags = await get('/api/v1/posts/tags');
    expect(tags.body.data.some((x: any) => x.slug === 'fresh-tag')).toBe(true);
  });

  it('when translations are written, then the spec shape comes back, created turns false on update, and lang picks them on reads', async () => {
    const post = await published(t, p.writer.token, { title: 'Good morning', body: 'Hello' });
    const url = `/api/v1/posts/id/${post.id}/translations`;
    const tr = { lang: 'es', title: 'Buenos días', body: 'Hola', excerpt: 'Hola' };
    const first = await t.request('POST', url, { session: p.writer.token, body: tr });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ id: expect.any(String), lang: 'es', created: true });
    expect(first.body.user_context).toMatchObject({ authenticated: true });
    expect(first.body.meta).toEqual({});
    const second = await t.request('POST', url, { session: p.writer.token, body: { ...tr, title: 'Buenos días!' } });
    expect(second.body.data).toEqual({ id: first.body.data.id, lang: 'es', created: false });
    expect((await t.request('POST', url, { body: tr })).status).toBe(401);
    expect((await t.request('POST', url, { session: p.customer.token, body: tr })).status).toBe(403);
    expect((await t.request('POST', url, { session: p.writer2.token, body: tr })).status).toBe(403);
    expect((await t.request('POST', '/api/v1/posts/id/00000000-0000-0000-0000-000000000000/translations', { session: p.writer.token, body: tr })).status).toBe(
      404,
    );
    for (const body of [{}, { ...tr, lang: 'spanish' }, { ...tr, title: '' }, { ...tr, body: 5 }, { ...tr, lang: 'en' }]) {
      expect((await t.request('POST', url, { session: p.writer.token, body })).status, JSON.stringify(body)).toBe(400);
    }
    const list = await get(url);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ lang: 'es', title: 'Buenos días!', body: 'Hola' });
    const es = await get(`/api/v1/posts/${post.slug}?lang=es`);
    expect(es.body.data).toMatchObject({ id: post.id, lang: 'es', title: 'Buenos días!', body: 'Hola', translated_from: 'en' });
    expect(es.body.data.available_langs).toEqual(['en', 'es']);
    expect((await get(`/api/v1/posts/id/${post.id}?lang=es`)).body.data.title).toBe('Buenos días!');
    const listed = await get(`/api/v1/posts/?lang=es&author=${p.writer.id}`);
    expect(listed.body.data.find((x: any) => x.id === post.id)?.title).toBe('Buenos días!');
  });

  it('when an author page is asked for, then it shows the public profile and no email; unknown ids are 404', async () => {
    await published(t, p.writer.token);
    const r = await get(`/api/v1/posts/authors/${p.writer.id}`);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: p.writer.id, name: 'writer name' });
    expect(r.body.data.post_count).toBeGreaterThan(0);
    expect(r.text).not.toContain(p.writer.email);
    expect((await get('/api/v1/posts/authors/nobody')).status).toBe(404);
    expect((await get(`/api/v1/posts/authors/${p.customer.id}`)).status).toBe(404);
  });
});
