import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, defineType, people, RECIPE, startPostTypes, type TestApp } from './test/kit.js';

let t: TestApp;
let p: Awaited<ReturnType<typeof people>>;
beforeAll(async () => {
  t = await startPostTypes();
  p = await people(t);
});
afterAll(async () => {
  await t?.close();
});

const req = (method: string, path: string, session?: string, body?: unknown) => t.request(method, path, { session, body });
const keys = (r: { body: { data: { type_key: string }[] } }) => r.body.data.map((d) => d.type_key);

describe(`post type definitions (${BACKEND})`, () => {
  it('when anyone lists post types, then the built-ins answer in the spec shape; active=false adds inactive ones; other values are 400', async () => {
    const r = await req('GET', '/api/v1/post-types');
    expect(r.status).toBe(200);
    expect(keys(r)).toEqual(['post', 'page']);
    expect(r.body.user_context).toMatchObject({ authenticated: false });
    expect(r.body.meta).toMatchObject({ total: 2, active_only: true });
    const post = r.body.data[0];
    expect(Object.keys(post).sort()).toEqual(
      [
        'id',
        'type_key',
        'type_name',
        'description',
        'slug_prefix',
        'field_schema',
        'behaviors',
        'icon',
        'color',
        'is_active',
        'is_built_in',
        'sort_order',
        'created_at',
        'updated_at',
      ].sort(),
    );
    expect(post).toMatchObject({ is_built_in: true, is_active: true, field_schema: [] });
    expect(post.behaviors).toMatchObject({ enables_comments: true, allowed_body_formats: ['markdown', 'html', 'plain'], max_per_author: null });
    expect(r.body.data[1].behaviors).toMatchObject({ enables_comments: false, enables_scheduling: false });
    expect((await req('GET', '/api/v1/post-types', p.customer.token)).body.user_context).toMatchObject({ authenticated: true, user_type: 'customer' });

    await defineType(t, p.admin.token, { type_key: 'memo', type_name: 'Memo', is_active: false });
    expect(keys(await req('GET', '/api/v1/post-types'))).toEqual(['post', 'page']);
    expect(keys(await req('GET', '/api/v1/post-types?active=true'))).toEqual(['post', 'page']);
    expect(keys(await req('GET', '/api/v1/post-types?active=false'))).toEqual(['post', 'page', 'memo']);
    for (const bad of ['yes', '1', 'TRUE', '']) {
      const b = await req('GET', `/api/v1/post-types?active=${bad}`);
      expect(b.status, bad).toBe(400);
      expect(b.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    }
  });

  it('when an admin defines, reads and changes a type, then the definition is normalised, behaviours merge, and writers and customers are refused', async () => {
    const d = await defineType(t, p.admin.token, RECIPE);
    expect(d).toMatchObject({ type_key: 'recipe', type_name: 'Recipe', slug_prefix: 'recipes', is_built_in: false, is_active: true, color: '#ff8800' });
    expect(d.field_schema).toEqual([
      { name: 'servings', label: 'Servings', type: 'number', required: true, options: [], max_length: null, placeholder: '' },
      { name: 'difficulty', label: 'Difficulty', type: 'select', required: false, options: ['easy', 'hard'], max_length: null, placeholder: '' },
    ]);
    expect(d.behaviors).toMatchObject({ enables_comments: false, enables_reactions: true, public_by_default: true });
    expect(d.sort_order).toBeGreaterThan(1);

    const one = await req('GET', '/api/v1/post-types/recipe', p.admin.token);
    expect(one.status).toBe(200);
    expect(one.body.data.id).toBe(d.id);
    expect(one.body.meta).toEqual({ post_count: 0 });

    const up = await req('PUT', '/api/v1/post-types/recipe', p.admin.token, {
      ...one.body.data, // an echo of the answer (id, is_built_in, dates) is accepted
      type_name: 'Recipes',
      behaviors: { enables_reactions: false, kitchen: 'open' },
    });
    expect(up.status).toBe(200);
    expect(up.body.data.type_name).toBe('Recipes');
    expect(up.body.data.behaviors).toMatchObject({ enables_comments: false, enables_reactions: false, kitchen: 'open' });
    const dropped = await req('PUT', '/api/v1/post-types/recipe', p.admin.token, { behaviors: { kitchen: null } });
    expect(dropped.body.data.behaviors).not.toHaveProperty('kitchen');
    expect(dropped.body.data.behaviors.enables_reactions).toBe(false);

    for (const who of [p.writer.token, p.customer.token]) {
      expect((await req('POST', '/api/v1/post-types', who, { type_key: 'x-type', type_name: 'X' })).status).toBe(403);
      expect((await req('GET', '/api/v1/post-types/recipe', who)).status).toBe(403);
      expect((await req('PUT', '/api/v1/post-types/recipe', who, { type_name: 'Mine' })).status).toBe(403);
      expect((await req('DELETE', '/api/v1/post-types/recipe', who)).status).toBe(403);
    }
    expect((await req('POST', '/api/v1/post-types', undefined, { type_key: 'x-type', type_name: 'X' })).status).toBe(401);
    expect((await req('GET', '/api/v1/post-types/nope', p.admin.token)).status).toBe(404);
    expect((await req('PUT', '/api/v1/post-types/nope', p.admin.token, { type_name: 'N' })).status).toBe(404);
  });

  it('when a definition is wrong, then it is a 400 naming the problem and nothing is stored', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ type_name: 'No key' }, /type_key/],
      [{ type_key: 'Bad Key', type_name: 'B' }, /type_key/],
      [{ type_key: 'reorder', type_name: 'R' }, /type_key: is reserved/],
      [{ type_key: 'nameless' }, /type_name/],
      [{ type_key: 'post', type_name: 'Again' }, /already a post type/],
      [{ type_key: 'f1', type_name: 'F', field_schema: [{ name: 'a', type: 'colour' }] }, /field_schema\.0\.type: must be one of/],
      [{ type_key: 'f2', type_name: 'F', field_schema: [{ name: 'a', type: 'select' }] }, /field_schema\.0\.options: required/],
      [{ type_key: 'f3', type_name: 'F', field_schema: [{ name: 'a', type: 'text', options: ['x'] }] }, /options: only for select/],
      [{ type_key: 'f4', type_name: 'F', field_schema: [{ name: 'a', type: 'number', max_length: 3 }] }, /max_length: only for/],
      [
        {
          type_key: 'f5',
          type_name: 'F',
          field_schema: [
            { name: 'a', type: 'text' },
            { name: 'a', type: 'url' },
          ],
        },
        /field_schema\.1\.name: "a" is used/,
      ],
      [{ type_key: 'f6', type_name: 'F', field_schema: [{ name: 'Has Space', type: 'text' }] }, /field_schema\.0\.name/],
      [{ type_key: 'f7', type_name: 'F', field_schema: [{ name: 'a', type: 'multiselect', options: ['x', 'x'] }] }, /must not repeat/],
      [{ type_key: 'f8', type_name: 'F', behaviors: { default_visibility: 'password' } }, /behaviors\.default_visibility/],
      [{ type_key: 'f9', type_name: 'F', behaviors: { allowed_body_formats: [] } }, /behaviors\.allowed_body_formats/],
      [{ type_key: 'f10', type_name: 'F', behaviors: { max_per_author: 0 } }, /behaviors\.max_per_author/],
      [{ type_key: 'f11', type_name: 'F', behaviors: { enables_comments: 'no' } }, /behaviors\.enables_comments/],
      [{ type_key: 'f12', type_name: 'F', color: 'orange' }, /color/],
      [{ type_key: 'f13', type_name: 'F', slug_prefix: 'with space' }, /slug_prefix/],
      [{ type_key: 'f14', type_name: 'F', unknown_key: 1 }, /unknown_key|Unrecognized/i],
    ];
    const before = keys(await req('GET', '/api/v1/post-types?active=false'));
    for (const [body, message] of cases) {
      const r = await req('POST', '/api/v1/post-types', p.admin.token, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.success).toBe(false);
      expect(r.body.error, JSON.stringify(body)).toMatch(message);
    }
    expect(keys(await req('GET', '/api/v1/post-types?active=false'))).toEqual(before);
    const rename = await req('PUT', '/api/v1/post-types/page', p.admin.token, { type_key: 'pages' });
    expect(rename.status).toBe(400);
    expect(rename.body.code).toBe('POST_TYPE_KEY_FIXED');
    expect((await req('PUT', '/api/v1/post-types/page', p.admin.token, {})).status).toBe(400);
  });

  it('when types are reordered, then the named ones lead in that order and the rest follow; unknown or repeated keys are refused', async () => {
    await defineType(t, p.admin.token, { type_key: 'event', type_name: 'Event' });
    const all = keys(await req('GET', '/api/v1/post-types?active=false'));
    const r = await req('POST', '/api/v1/post-types/reorder', p.admin.token, { order: ['event', 'page'] });
    expect(r.status).toBe(200);
    const rest = all.filter((k) => k !== 'event' && k !== 'page');
    expect(keys(r)).toEqual(['event', 'page', ...rest]);
    expect(keys(await req('GET', '/api/v1/post-types?active=false'))).toEqual(['event', 'page', ...rest]);
    expect(r.body.data.map((d: { sort_order: number }) => d.sort_order)).toEqual(all.map((_, i) => i));
    for (const body of [{ order: ['event', 'nope'] }, { order: ['event', 'event'] }, { order: [] }, {}, { order: 'event' }]) {
      expect((await req('POST', '/api/v1/post-types/reorder', p.admin.token, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(keys(await req('GET', '/api/v1/post-types?active=false'))).toEqual(['event', 'page', ...rest]);
    expect((await req('POST', '/api/v1/post-types/reorder', p.writer.token, { order: ['page'] })).status).toBe(403);
  });

  it('when a type is deleted, then built-ins are refused, a used type needs move_to, and its posts move', async () => {
    const builtIn = await req('DELETE', '/api/v1/post-types/post', p.admin.token);
    expect(builtIn.status).toBe(400);
    expect(builtIn.body.code).toBe('POST_TYPE_BUILT_IN');
    await defineType(t, p.admin.token, { type_key: 'note', type_name: 'Note' });
    await defineType(t, p.admin.token, { type_key: 'aside', type_name: 'Aside' });
    const post = await t.request('POST', '/api/v1/posts', { session: p.writer.token, body: { title: 'A note', post_type: 'note', status: 'published' } });
    expect(post.status).toBe(200);
    expect((await req('GET', '/api/v1/post-types/note', p.admin.token)).body.meta.post_count).toBe(1);
    const refused = await req('DELETE', '/api/v1/post-types/note', p.admin.token);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'POST_TYPE_IN_USE' });
    expect(refused.body.error).toMatch(/move_to/);
    expect((await req('DELETE', '/api/v1/post-types/note?move_to=note', p.admin.token)).status).toBe(400);
    expect((await req('DELETE', '/api/v1/post-types/note?move_to=nope', p.admin.token)).status).toBe(400);
    expect((await req('DELETE', '/api/v1/post-types/note?move_to=Bad%20Key', p.admin.token)).status).toBe(400);
    const moved = await req('DELETE', '/api/v1/post-types/note?move_to=aside', p.admin.token);
    expect(moved.status).toBe(200);
    expect(moved.body.data).toEqual({ type_key: 'note', deleted: true, moved_posts: 1, moved_to: 'aside' });
    expect((await t.request('GET', `/api/v1/posts/id/${post.body.data.id}`)).body.data.post_type).toBe('aside');
    expect((await req('GET', '/api/v1/post-types/note', p.admin.token)).status).toBe(404);
    const unused = await defineType(t, p.admin.token, { type_key: 'unused', type_name: 'Unused' });
    expect((await req('DELETE', `/api/v1/post-types/${unused.type_key}`, p.admin.token)).body.data.moved_posts).toBe(0);
  });
});

describe(`post type changes at once (${BACKEND})`, () => {
  it('when two admins change different behaviours of a type at once, then both changes stay', async () => {
    for (let round = 0; round < 10; round++) {
      const key = `race-${round}-${Date.now().toString(36)}`;
      await defineType(t, p.admin.token, { type_key: key, type_name: 'Race' });
      const answers = await Promise.all([
        req('PUT', `/api/v1/post-types/${key}`, p.admin.token, { behaviors: { enables_comments: false } }),
        req('PUT', `/api/v1/post-types/${key}`, p.admin.token, { behaviors: { enables_reactions: false } }),
      ]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      const after = (await req('GET', `/api/v1/post-types/${key}`, p.admin.token)).body.data;
      expect(after.behaviors, `round ${round}`).toMatchObject({ enables_comments: false, enables_reactions: false });
    }
  });

  it('when two types are deleted at once, each moving its posts to the other, then one deletion wins and no post is left on a deleted type', async () => {
    for (let round = 0; round < 10; round++) {
      const [a, b] = ['a', 'b'].map((x) => `swap-${x}-${round}-${Date.now().toString(36)}`);
      for (const key of [a, b]) await defineType(t, p.admin.token, { type_key: key, type_name: key });
      const post = await t.request('POST', '/api/v1/posts', { session: p.writer.token, body: { title: `Swap ${round}`, post_type: a, status: 'published' } });
      expect(post.status).toBe(200);
      const answers = await Promise.all([
        req('DELETE', `/api/v1/post-types/${a}?move_to=${b}`, p.admin.token),
        req('DELETE', `/api/v1/post-types/${b}?move_to=${a}`, p.admin.token),
      ]);
      expect(answers.map((r) => r.status).sort(), `round ${round}`).toEqual([200, 400]);
      const [rows] = await t.app.sequelize.query('SELECT post_type FROM blog_posts WHERE id = ?', { replacements: [post.body.data.id] });
      const left = (rows as { post_type: string }[])[0].post_type;
      expect((await req('GET', `/api/v1/post-types/${left}`, p.admin.token)).status, `round ${round}`).toBe(200);
    }
  });
});
