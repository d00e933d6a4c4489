import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { call, json, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);
afterEach(stopStartedClis);

describe('gatehouse module install blog', () => {
  it('when the blog is installed on a fresh install, then a running server serves it and a writer drafts, schedules and the job publishes', async () => {
    const dir = tempDir();
    const cli = (...args: string[]) => runCli([...args, '--data-dir', dir]);
    expect((await cli('init', '--yes')).code).toBe(0);
    const writer = json(await cli('user', 'create', '--json', '--email', 'writer@example.com', '--type', 'writer'));
    const s = startCli(['serve', '--port', '0', '--data-dir', dir], { env: { JOBS_ENABLED: 'true' } });
    const url = (await s.waitFor(LISTENING))[1];
    const before = await call(url, 'GET', '/api/v1/posts/?lang=en');
    expect(before.status).toBe(503);
    expect(before.body).toMatchObject({ code: 'MODULE_DISABLED', error: expect.stringContaining('gatehouse module install blog') });

    const install = await cli('module', 'install', 'blog', '--json');
    expect(install.code, install.stderr).toBe(0);
    expect(json(install).modules[0]).toMatchObject({ module_id: 'blog', status: 'installed', installed_version: '1.0.0' });

    await expect.poll(async () => (await call(url, 'GET', '/api/v1/posts/?lang=en')).status, { timeout: 8000, interval: 100 }).toBe(200);
    expect((await call(url, 'GET', '/api/v1/posts/?lang=en')).body).toMatchObject({ data: [], meta: { total: 0 } });

    const login = await call(url, 'POST', '/auth/login', { body: { email: 'writer@example.com', password: writer.password } });
    const session = login.body.sessionId as string;
    const draft = await call(url, 'POST', '/api/v1/posts', { session, body: { title: 'From the CLI install', body: 'Scheduled *soon*' } });
    expect(draft.status).toBe(200);
    const id = draft.body.data.id as string;
    const when = new Date(Date.now() + 1500).toISOString();
    expect((await call(url, 'POST', `/api/v1/posts/${id}/schedule`, { session, body: { scheduled_at: when } })).body.data.status).toBe('scheduled');
    // Only the author reads it (a scheduled post is the author's alone); reading publishes nothing.
    await expect
      .poll(async () => (await call(url, 'GET', `/api/v1/posts/id/${id}`, { session })).body.data.status, { timeout: 20_000, interval: 500 })
      .toBe('published');
    expect((await call(url, 'GET', '/api/v1/posts/from-the-cli-install')).status).toBe(200);
  }, 90_000);
});
