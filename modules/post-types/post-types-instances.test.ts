import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, defineType, people, startPostTypes, type TestApp } from './test/kit.js';

/**
 * Two instances on one database (and, on the pg backend, one Redis). B serves definitions from its
 * cache; a change made through A must show on B's very next request, with no wait.
 */
let a: TestApp;
let b: TestApp;
let p: Awaited<ReturnType<typeof people>>;
beforeAll(async () => {
  a = await startPostTypes();
  b = await startPostTypes({ sharing: a });
  p = await people(a);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const names = async (app: TestApp) =>
  Object.fromEntries(
    ((await app.request('GET', '/api/v1/post-types?active=false')).body.data as { type_key: string; type_name: string }[]).map((d) => [
      d.type_key,
      d.type_name,
    ]),
  );

describe(`post type definitions across instances (${BACKEND})`, () => {
  it('when A changes, adds or deletes a type, then B answers with the change on its next request', async () => {
    // Warm B's cache.
    expect((await names(b)).page).toBe('Page');
    const warm = await b.request('GET', '/api/v1/post-types');
    expect(warm.body.meta.cache).toBe('hit');

    expect((await a.request('PUT', '/api/v1/post-types/page', { session: p.admin.token, body: { type_name: 'Static page' } })).status).toBe(200);
    expect((await names(b)).page).toBe('Static page');

    await defineType(a, p.admin.token, { type_key: 'podcast', type_name: 'Podcast', field_schema: [{ name: 'minutes', type: 'number', required: true }] });
    expect((await names(b)).podcast).toBe('Podcast');
    // B's blog follows the new type at once too.
    const onB = await b.request('POST', '/api/v1/posts', { session: p.writer.token, body: { title: 'Episode 1', post_type: 'podcast' } });
    expect(onB.status).toBe(400);
    expect(onB.body.error).toMatch(/fields\.minutes: required/);
    expect(
      (await b.request('POST', '/api/v1/posts', { session: p.writer.token, body: { title: 'Episode 1', post_type: 'podcast', fields: { minutes: 42 } } }))
        .status,
    ).toBe(200);

    expect((await a.request('PUT', '/api/v1/post-types/podcast', { session: p.admin.token, body: { is_active: false } })).status).toBe(200);
    expect((await b.request('GET', '/api/v1/post-types')).body.data.map((d: { type_key: string }) => d.type_key)).not.toContain('podcast');
    expect((await b.request('POST', '/api/v1/posts', { session: p.writer.token, body: { title: 'Episode 2', post_type: 'podcast' } })).body.code).toBe(
      'POST_TYPE_INACTIVE',
    );

    expect((await a.request('DELETE', '/api/v1/post-types/podcast?move_to=post', { session: p.admin.token })).body.data.moved_posts).toBe(1);
    expect(await names(b)).not.toHaveProperty('podcast');
  });
});
