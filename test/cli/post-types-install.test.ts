import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { call, json, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);
afterEach(stopStartedClis);

describe('gatehouse module install blog post-types', () => {
  it('when an operator installs both on a fresh install, then an admin defines a recipe type the blog enforces, and the environment switches the listing', async () => {
    const dir = tempDir();
    const cli = (...args: string[]) => runCli([...args, '--data-dir', dir]);
    expect((await cli('init', '--yes')).code).toBe(0);
    const install = await cli('module', 'install', 'blog', 'post-types', '--json');
    expect(install.code, install.stderr).toBe(0);
    expect(json(install).modules.map((m: { module_id: string }) => m.module_id)).toEqual(['blog', 'post-types']);
    const admin = json(await cli('user', 'create', '--json', '--email', 'admin@example.com', '--type', 'admin'));
    const writer = json(await cli('user', 'create', '--json', '--email', 'writer@example.com', '--type', 'writer'));
    const reader = json(await cli('user', 'create', '--json', '--email', 'reader@example.com', '--type', 'customer'));

    const serve = (env: Record<string, string> = {}) => startCli(['serve', '--port', '0', '--data-dir', dir], { env });
    let s = serve();
    let url = (await s.waitFor(LISTENING))[1];
    const login = async (email: string, password: string) => (await call(url, 'POST', '/auth/login', { body: { email, password } })).body.sessionId as string;
    const [a, w, r] = [
      await login('admin@example.com', admin.password),
      await login('writer@example.com', writer.password),
      await login('reader@example.com', reader.password),
    ];

    const listed = await call(url, 'GET', '/api/v1/post-types');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((d: { type_key: string }) => d.type_key)).toEqual(['post', 'page']);
    const recipe = await call(url, 'POST', '/api/v1/post-types', {
      session: a,
      body: {
        type_key: 'recipe',
        type_name: 'Recipe',
        field_schema: [{ name: 'servings', type: 'number', required: true }],
        behaviors: { enables_comments: false },
      },
    });
    expect(recipe.status).toBe(200);
    const missing = await call(url, 'POST', '/api/v1/posts', { session: w, body: { title: 'Soup', post_type: 'recipe', status: 'published' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/fields\.servings/);
    const soup = await call(url, 'POST', '/api/v1/posts', {
      session: w,
      body: { title: 'Soup', post_type: 'recipe', status: 'published', fields: { servings: 4 } },
    });
    expect(soup.status).toBe(200);
    const comment = await call(url, 'POST', `/api/v1/posts/${soup.body.data.id}/comments`, { session: r, body: { comment_body: 'Lovely' } });
    expect(comment.status).toBe(403);
    expect(comment.body.code).toBe('COMMENTS_DISABLED');
    expect((await call(url, 'GET', '/api/v1/post-types?active=maybe')).status).toBe(400);
    s.child.kill('SIGTERM');
    await s.exited;

    s = serve({ POST_TYPES_ENABLED: 'false' });
    url = (await s.waitFor(LISTENING))[1];
    const off = await call(url, 'GET', '/api/v1/post-types');
    expect(off.status).toBe(503);
    expect(off.body.code).toBe('MODULE_DISABLED');
    s.child.kill('SIGTERM');
    await s.exited;

    s = serve({ POST_TYPES_FRESH_CACHE_MODE: 'true' });
    url = (await s.waitFor(LISTENING))[1];
    const fresh = await call(url, 'GET', '/api/v1/post-types?active=false');
    expect(fresh.status).toBe(200);
    expect(fresh.body.meta.cache).toBe('off');
    expect(fresh.body.data.map((d: { type_key: string }) => d.type_key)).toEqual(['post', 'page', 'recipe']);
  }, 120_000);
});
