import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, startBlog, type TestApp } from './test/kit.js';

let t: TestApp;
beforeAll(async () => {
  t = await startBlog();
});
afterAll(async () => {
  await t?.close();
});

describe(`blog in the API reference (${BACKEND})`, () => {
  it('when the blog is installed, then /openapi.json lists its routes', async () => {
    const r = await t.request('GET', '/openapi.json');
    expect(r.status).toBe(200);
    const paths = Object.keys(r.body.paths);
    for (const p of ['/api/v1/posts', '/api/v1/posts/{slug}', '/api/v1/posts/id/{id}/translations', '/api/v1/posts/comments/{id}/moderate'])
      expect(paths).toContain(p);
  });
});
