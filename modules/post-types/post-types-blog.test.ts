import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, defineType, makePost, people, published, RECIPE, startPostTypes, type TestApp } from './test/kit.js';

let t: TestApp;
let p: Awaited<ReturnType<typeof people>>;
const SITE = 'https://site.example';
beforeAll(async () => {
  // The blog's site_url setting given by the environment (BLOG_SITE_URL), as an operator would.
  t = await startPostTypes({ env: { BLOG_SITE_URL: SITE } });
  p = await people(t);
});
afterAll(async () => {
  await t?.close();
});

const req = (method: string, path: string, session?: string, body?: unknown) => t.request(method, path, { session, body });
const create = (token: string, body: Record<string, unknown>) => req('POST', '/api/v1/posts', token, { title: `T ${Math.random()}`, body: 'Hello', ...body });
let n = 0;
const type = (behaviors: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  defineType(t, p.admin.token, { type_key: `kind-${++n}`, type_name: `Kind ${n}`, behaviors, ...extra });

describe(`blog posts follow their post type (${BACKEND})`, () => {
  it('when a recipe type has a required number and comments off, then a recipe without it is a 400 naming it, with it succeeds, and comments are refused', async () => {
    await defineType(t, p.admin.token, RECIPE);
    const missing = await create(p.writer.token, { post_type: 'recipe', status: 'published' });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect(missing.body.error).toMatch(/fields\.servings: required/);
    for (const [fields, message] of [
      [{ servings: 'many' }, /fields\.servings: must be a number/],
      [{ servings: 2, difficulty: 'medium' }, /fields\.difficulty: must be one of easy, hard/],
      [{ servings: 2, spice: 'hot' }, /fields\.spice: not a field/],
    ] as const) {
      const r = await create(p.writer.token, { post_type: 'recipe', fields });
      expect(r.status, JSON.stringify(fields)).toBe(400);
      expect(r.body.error).toMatch(message);
    }
    const ok = await create(p.writer.token, { post_type: 'recipe', status: 'published', fields: { servings: '4', difficulty: 'easy' } });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ post_type: 'recipe', fields: { servings: 4, difficulty: 'easy' } });
    expect(ok.body.data.path).toBe(`/recipes/${ok.body.data.slug}`);
    expect(ok.body.user_context.can).toMatchObject({ comment: false, react: true });

    const comment = await req('POST', `/api/v1/posts/${ok.body.data.id}/comments`, p.customer.token, { comment_body: 'Yum' });
    expect(comment.status).toBe(403);
    expect(comment.body).toMatchObject({ success: false, code: 'COMMENTS_DISABLED' });
    expect((await req('GET', `/api/v1/posts/${ok.body.data.id}/comments`, p.customer.token)).body.user_context.can.comment).toBe(false);
    const plain = await published(t, p.writer.token);
    expect((await req('POST', `/api/v1/posts/${plain.id}/comments`, p.customer.token, { comment_body: 'Fine' })).status).toBe(200);

    // Updates: fields replace and are checked; a post of type post takes no fields; lists filter by type.
    expect((await req('PUT', `/api/v1/posts/${ok.body.data.id}`, p.writer.token, { fields: { difficulty: 'hard' } })).body.error).toMatch(/servings: required/);
    const up = await req('PUT', `/api/v1/posts/${ok.body.data.id}`, p.writer.token, { fields: { servings: 6 } });
    expect(up.body.data.fields).toEqual({ servings: 6 });
    expect((await req('PUT', `/api/v1/posts/${plain.id}`, p.writer.token, { fields: { servings: 1 } })).status).toBe(400);
    const retype = await req('PUT', `/api/v1/posts/${plain.id}`, p.writer.token, { post_type: 'recipe' });
    expect(retype.status).toBe(400);
    expect(retype.body.error).toMatch(/fields\.servings: required/);
    expect((await req('PUT', `/api/v1/posts/${plain.id}`, p.writer.token, { post_type: 'recipe', fields: { servings: 1 } })).body.data.post_type).toBe(
      'recipe',
    );
    const list = await req('GET', '/api/v1/posts?post_type=recipe');
    expect(list.body.data.map((x: { id: string }) => x.id).sort()).toEqual([ok.body.data.id, plain.id].sort());
    expect((await req('GET', '/api/v1/posts?post_type=Not%20A%20Key')).status).toBe(400);
    expect((await create(p.writer.token, { post_type: 'nope' })).body.code).toBe('UNKNOWN_POST_TYPE');
  });

  it('when a type is switched off, then no new posts of it are accepted while its posts stay readable', async () => {
    const k = await type({});
    const post = await published(t, p.writer.token, { post_type: k.type_key });
    expect((await req('PUT', `/api/v1/post-types/${k.type_key}`, p.admin.token, { is_active: false })).status).toBe(200);
    const r = await create(p.writer.token, { post_type: k.type_key });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('POST_TYPE_INACTIVE');
    expect((await req('GET', `/api/v1/posts/id/${post.id}`)).status).toBe(200);
  });

  it('when a type sets public_by_default or default_visibility, then new posts take it unless they name one', async () => {
    const members = await type({ public_by_default: false });
    const hidden = await type({ default_visibility: 'private' });
    expect((await makePost(t, p.writer.token, { post_type: members.type_key })).visibility).toBe('auth');
    expect((await makePost(t, p.writer.token, { post_type: hidden.type_key })).visibility).toBe('private');
    expect((await makePost(t, p.writer.token, { post_type: hidden.type_key, visibility: 'public' })).visibility).toBe('public');
    expect((await makePost(t, p.writer.token)).visibility).toBe('public');
  });

  it('when reactions, bookmarks or views are off, then those routes answer 403 with their codes and abilities say so', async () => {
    const quiet = await type({ enables_reactions: false, enables_bookmarks: false, enables_views: false });
    const post = await published(t, p.writer.token, { post_type: quiet.type_key });
    const base = `/api/v1/posts/${post.id}`;
    expect((await req('POST', `${base}/reactions`, p.customer.token, { reaction_type: 'like' })).body).toMatchObject({ code: 'REACTIONS_DISABLED' });
    expect((await req('POST', `${base}/bookmark`, p.customer.token)).body).toMatchObject({ code: 'BOOKMARKS_DISABLED' });
    const view = await req('POST', `${base}/view`, p.customer.token);
    expect(view.status).toBe(403);
    expect(view.body.code).toBe('VIEWS_DISABLED');
    const read = await req('GET', `/api/v1/posts/id/${post.id}`, p.customer.token);
    expect(read.body.user_context.can).toMatchObject({ react: false, bookmark: false, view: false, comment: true });
    const open = await published(t, p.writer.token);
    expect((await req('POST', `/api/v1/posts/${open.id}/reactions`, p.customer.token, { reaction_type: 'like' })).status).toBe(200);
    expect((await req('POST', `/api/v1/posts/${open.id}/bookmark`, p.customer.token)).status).toBe(200);
    expect((await req('POST', `/api/v1/posts/${open.id}/view`, p.customer.token)).status).toBe(200);
  });

  it('when scheduling is off, then status scheduled, scheduled_at and the schedule route are refused', async () => {
    const now = await type({ enables_scheduling: false });
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const r = await create(p.writer.token, { post_type: now.type_key, status: 'scheduled', scheduled_at: later });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('SCHEDULING_DISABLED');
    const draft = await makePost(t, p.writer.token, { post_type: now.type_key });
    expect((await req('POST', `/api/v1/posts/${draft.id}/schedule`, p.writer.token, { scheduled_at: later })).body.code).toBe('SCHEDULING_DISABLED');
    expect((await req('PUT', `/api/v1/posts/${draft.id}`, p.writer.token, { scheduled_at: later })).body.code).toBe('SCHEDULING_DISABLED');
    // The built-in page type does not schedule either.
    expect((await create(p.writer.token, { post_type: 'page', status: 'scheduled', scheduled_at: later })).body.code).toBe('SCHEDULING_DISABLED');
  });

  it('when a type requires approval, then a writer publishing sends the post to review, hidden until an admin publishes it', async () => {
    const reviewed = await type({ requires_approval: true });
    const sent = await create(p.writer.token, { post_type: reviewed.type_key, status: 'published' });
    expect(sent.status).toBe(200);
    expect(sent.body.data.status).toBe('pending');
    expect(sent.body.data.published_at).toBeNull();
    expect(sent.body.user_context.can).toMatchObject({ publish: false, submit_for_review: true });
    const id = sent.body.data.id;
    expect((await req('GET', `/api/v1/posts/id/${id}`)).status).toBe(404);
    expect((await req('GET', `/api/v1/posts/id/${id}`, p.customer.token)).status).toBe(404);
    const draft = await makePost(t, p.writer.token, { post_type: reviewed.type_key });
    expect((await req('POST', `/api/v1/posts/${draft.id}/publish`, p.writer.token)).body.data.status).toBe('pending');
    expect((await req('PUT', `/api/v1/posts/${draft.id}`, p.writer.token, { status: 'published' })).body.data.status).toBe('pending');
    const queue = await req('GET', '/api/v1/posts?status=pending', p.admin.token);
    expect(queue.body.data.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([id, draft.id]));
    expect((await req('GET', '/api/v1/posts?status=pending', p.writer2.token)).body.data).toEqual([]);
    const approved = await req('POST', `/api/v1/posts/${id}/publish`, p.admin.token);
    expect(approved.body.data.status).toBe('published');
    expect((await req('GET', `/api/v1/posts/id/${id}`)).status).toBe(200);
    // An admin's own posts of the type publish at once.
    expect((await create(p.admin.token, { post_type: reviewed.type_key, status: 'published' })).body.data.status).toBe('published');
  });

  it('when password visibility or body formats are limited, then other choices are refused and the default format follows the type', async () => {
    const open = await type({ allows_password_visibility: false, allowed_body_formats: ['html'] });
    const pw = await create(p.writer.token, { post_type: open.type_key, visibility: 'password', password: 'secret-1' });
    expect(pw.status).toBe(400);
    expect(pw.body.code).toBe('PASSWORD_VISIBILITY_DISABLED');
    const md = await create(p.writer.token, { post_type: open.type_key, body_format: 'markdown' });
    expect(md.status).toBe(400);
    expect(md.body.code).toBe('BODY_FORMAT_NOT_ALLOWED');
    expect(md.body.error).toMatch(/body_format: .*html/);
    const made = await makePost(t, p.writer.token, { post_type: open.type_key, body: '<p>Hi</p>' });
    expect(made.body_format).toBe('html');
    expect((await req('PUT', `/api/v1/posts/${made.id}`, p.writer.token, { body_format: 'plain' })).body.code).toBe('BODY_FORMAT_NOT_ALLOWED');
    expect((await req('PUT', `/api/v1/posts/${made.id}`, p.writer.token, { visibility: 'password', password: 'secret-1' })).status).toBe(400);
    expect((await makePost(t, p.writer.token, { visibility: 'password', password: 'secret-1' })).visibility).toBe('password');
  });

  it('when a type allows 3 posts per author and 50 are created at once, then exactly 3 succeed, and a deleted one frees a place', async () => {
    const few = await type({ max_per_author: 3 });
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => create(p.writer.token, { post_type: few.type_key, title: `Few ${i}` })));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok).toHaveLength(3);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.every((a) => a.status === 403 && a.body.code === 'POST_TYPE_LIMIT_REACHED')).toBe(true);
    const mine = await req('GET', `/api/v1/posts?post_type=${few.type_key}&status=all`, p.writer.token);
    expect(mine.body.meta.total).toBe(3);
    // Another author has places of their own; a deleted post frees one, and restoring it is refused while full.
    expect((await create(p.writer2.token, { post_type: few.type_key })).status).toBe(200);
    const gone = ok[0]!.body.data.id;
    expect((await req('DELETE', `/api/v1/posts/${gone}`, p.writer.token)).status).toBe(200);
    expect((await create(p.writer.token, { post_type: few.type_key })).status).toBe(200);
    expect((await req('POST', `/api/v1/posts/${gone}/restore`, p.admin.token)).body.code).toBe('POST_TYPE_LIMIT_REACHED');
  });

  it('when SEO fields are sent, then posts keep them; a type without SEO refuses them', async () => {
    const seo = { meta_title: 'Best pasta', meta_description: 'How to', canonical_url: 'https://site.example/pasta', og_image: 'https://cdn.example/p.png' };
    const post = await makePost(t, p.writer.token, seo);
    expect(post).toMatchObject(seo);
    expect((await create(p.writer.token, { canonical_url: 'javascript:alert(1)' })).status).toBe(400);
    const bare = await type({ enables_seo: false });
    const r = await create(p.writer.token, { post_type: bare.type_key, meta_title: 'x' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('SEO_DISABLED');
    expect(r.body.error).toMatch(/^meta_title:/);
  });

  it('when the site is set, then the sitemap and feed link to each post at its type slug_prefix', async () => {
    const k = await type({}, { slug_prefix: 'guides/how-to' });
    const guide = await published(t, p.writer.token, { post_type: k.type_key, title: 'Fix a tap' });
    const post = await published(t, p.writer.token, { title: 'Plain news' });
    const sitemap = await req('GET', '/api/v1/posts/sitemap.xml');
    expect(sitemap.text).toContain(`<loc>${SITE}/guides/how-to/${guide.slug}?lang=en</loc>`);
    expect(sitemap.text).toContain(`<loc>${SITE}/${post.slug}?lang=en</loc>`);
    const feed = await req('GET', '/api/v1/posts/feed.xml');
    expect(feed.text).toContain(`<link>${SITE}/guides/how-to/${guide.slug}?lang=en</link>`);
    expect(guide.path).toBe(`/guides/how-to/${guide.slug}`);
  });
});
