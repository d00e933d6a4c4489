import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostTypes, type TestApp } from './test/kit.js';

/**
 * The shared cache when Redis missed a change (made while it was down): the database is ahead of the
 * revision Redis holds. Copies live at most 30 s; a read that meets the database drops Redis's revision
 * and the next one puts the database's there.
 */
let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await startPostTypes();
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const pageName = async (app: TestApp) => {
  const r = await app.request('GET', '/api/v1/post-types');
  return { name: r.body.data.find((d: { type_key: string }) => d.type_key === 'page')?.type_name, cache: r.body.meta.cache };
};

describe('post types cache on Redis (pg)', () => {
  it('when the database is ahead of Redis, then a read that meets it serves the database and resets the shared revision', async () => {
    const cache = a.app.modules.context('post-types').cache;
    expect(cache.shared).toBe(true);
    await pageName(a);
    expect(await pageName(a)).toEqual({ name: 'Page', cache: 'hit' });
    const before = await cache.get('revision');
    expect(before).toBeTruthy();

    // A change Redis never heard of.
    await a.app.sequelize.query("UPDATE post_types SET type_name = 'Behind Redis' WHERE type_key = 'page'");
    await a.app.sequelize.query("UPDATE post_types_revision SET revision = 'changed-while-down' WHERE id = 1");
    // A's young copy still answers (bounded staleness).
    expect((await pageName(a)).name).toBe('Page');

    // Another instance without a copy, after the shared copy expired, meets the database.
    b = await startPostTypes({ sharing: a });
    await cache.del('definitions');
    expect(await pageName(b)).toEqual({ name: 'Behind Redis', cache: 'miss' });
    expect(await cache.get('revision')).toBeNull();
    expect((await pageName(b)).name).toBe('Behind Redis');
    expect(await cache.get('revision')).toBe('changed-while-down');
    expect(await pageName(b)).toEqual({ name: 'Behind Redis', cache: 'hit' });
  });
});
