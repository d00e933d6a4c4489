import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, defineType, people, startPostTypes, type TestApp } from './test/kit.js';

/** GET /api/v1/post-types in each state the spec names: switched off (setting, hub, blog off), fresh-cache mode, cached. */
let t: TestApp;
let p: Awaited<ReturnType<typeof people>>;
const apps: TestApp[] = [];
beforeAll(async () => {
  t = await startPostTypes();
  p = await people(t);
});
afterAll(async () => {
  for (const a of apps) await a.close();
  await t?.close();
});

const list = (app: TestApp, query = '') => app.request('GET', `/api/v1/post-types${query}`);
/** Renames a type behind the module's back (no revision change), as a stale cache would not notice. */
const renameInDb = (app: TestApp, key: string, name: string) =>
  app.app.sequelize.query('UPDATE post_types SET type_name = ? WHERE type_key = ?', { replacements: [name, key] });
const nameOf = (r: { body: { data: { type_key: string; type_name: string }[] } }, key: string) => r.body.data.find((d) => d.type_key === key)?.type_name;

describe(`post types listing states (${BACKEND})`, () => {
  it('when POST_TYPES_ENABLED=false, then every post types route answers 503 MODULE_DISABLED and the blog keeps its built-in type only', async () => {
    const off = await startPostTypes({ env: { POST_TYPES_ENABLED: 'false' } });
    apps.push(off);
    const admin = await people(off);
    for (const [method, path, body] of [
      ['GET', '/api/v1/post-types'],
      ['GET', '/api/v1/post-types?active=false'],
      ['GET', '/api/v1/post-types/post'],
      ['POST', '/api/v1/post-types', { type_key: 'x', type_name: 'X' }],
      ['POST', '/api/v1/post-types/reorder', { order: ['page'] }],
      ['PUT', '/api/v1/post-types/post', { type_name: 'X' }],
      ['DELETE', '/api/v1/post-types/post'],
    ] as const) {
      const r = await off.request(method, path, { session: admin.admin.token, body });
      expect(r.status, `${method} ${path}`).toBe(503);
      expect(r.body).toMatchObject({ success: false, code: 'MODULE_DISABLED' });
    }
    const page = await off.request('POST', '/api/v1/posts', { session: admin.writer.token, body: { title: 'A page', post_type: 'page' } });
    expect(page.status).toBe(400);
    expect(page.body.code).toBe('UNKNOWN_POST_TYPE');
    expect((await off.request('POST', '/api/v1/posts', { session: admin.writer.token, body: { title: 'A post' } })).body.data.post_type).toBe('post');
  });

  it('when post types are switched off through the hub at run time, then the listing answers 503 MODULE_DISABLED, and 200 again once on', async () => {
    expect((await list(t)).status).toBe(200);
    await t.app.modules.hub.disable('post-types');
    const r = await list(t);
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('MODULE_DISABLED');
    await t.app.modules.hub.enable('post-types');
    expect((await list(t)).status).toBe(200);
  });

  it('when the blog is switched off, then the post types listing answers 503 too', async () => {
    await t.app.modules.hub.disable('blog');
    try {
      const r = await list(t);
      expect(r.status).toBe(503);
      expect(r.body.code).toBe('MODULE_DISABLED');
    } finally {
      await t.app.modules.hub.enable('blog');
    }
    expect((await list(t)).status).toBe(200);
  });

  it('when definitions are cached, then a change made behind the module is not seen, and one made through the API is at once', async () => {
    await defineType(t, p.admin.token, { type_key: 'cached', type_name: 'Cached' });
    expect(nameOf(await list(t), 'cached')).toBe('Cached');
    const warm = await list(t);
    expect(warm.body.meta.cache).toBe('hit');
    await renameInDb(t, 'cached', 'Renamed behind');
    expect(nameOf(await list(t), 'cached')).toBe('Cached');
    expect((await t.request('PUT', '/api/v1/post-types/cached', { session: p.admin.token, body: { type_name: 'Through the API' } })).status).toBe(200);
    expect(nameOf(await list(t), 'cached')).toBe('Through the API');
  });

  it('when POST_TYPES_FRESH_CACHE_MODE=true, then every listing reads the database and sees a change at once', async () => {
    const fresh = await startPostTypes({ env: { POST_TYPES_FRESH_CACHE_MODE: 'true' } });
    apps.push(fresh);
    const first = await list(fresh);
    expect(first.status).toBe(200);
    expect(first.body.meta.cache).toBe('off');
    await renameInDb(fresh, 'page', 'Pages, fresh');
    const again = await list(fresh);
    expect(nameOf(again, 'page')).toBe('Pages, fresh');
    expect(again.body.meta.cache).toBe('off');
    expect(nameOf(await list(fresh, '?active=false'), 'page')).toBe('Pages, fresh');
  });
});
