import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, people, published, startBlog, type TestApp } from './test/kit.js';

let t: TestApp;
let p: Awaited<ReturnType<typeof people>>;
beforeAll(async () => {
  t = await startBlog();
  p = await people(t);
});
afterAll(async () => {
  await t?.close();
});

describe(`blog writes at the same time (${BACKEND})`, () => {
  it('when two renames of one post run at once, then every address the post ever had still answers with it', async () => {
    for (let round = 0; round < 10; round++) {
      const post = await published(t, p.writer.token, { title: `Race ${round} ${Date.now()}` });
      const names = [`race-${round}-b-${Date.now()}`, `race-${round}-c-${Date.now()}`];
      const answers = await Promise.all(names.map((slug) => t.request('PUT', `/api/v1/posts/${post.id}`, { session: p.writer.token, body: { slug } })));
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      for (const slug of [post.slug, ...names]) {
        const r = await t.request('GET', `/api/v1/posts/${slug}`);
        expect(r.status, `round ${round}: /posts/${slug}`).toBe(200);
        expect(r.body.data.id).toBe(post.id);
      }
    }
  }, 120_000);
});
