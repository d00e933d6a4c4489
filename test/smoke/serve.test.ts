import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runtimeSupport } from '../../src/cli/checks/node-version.js';
import { call, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

/*
 * The quick tier's smoke run (`npm run test:quick`): the built CLI starts the real server the way the
 * README's quick start does, and a client checks it is alive, ready and lets the superadmin in.
 */

afterAll(removeTempDirs);
afterEach(stopStartedClis);

const PASSWORD = 'Smoke-test password 42!';

describe('smoke: gatehouse init and serve', () => {
  it('when a data dir is initialised and served, then /health and /ready answer, the superadmin logs in, and SIGTERM stops it', async () => {
    const dir = tempDir('gh-smoke-');
    const init = await runCli(['init', '--yes', '--data-dir', dir, '--admin-email', 'admin@example.test', '--admin-password-stdin'], { input: PASSWORD });
    expect(init.code, init.stderr).toBe(0);

    const s = startCli(['serve', '--port', '0', '--data-dir', dir]);
    const url = (await s.waitFor(LISTENING))[1]!;
    expect(await call(url, 'GET', '/health')).toEqual({ status: 200, body: { success: true, status: 'ok' } });
    expect(await call(url, 'GET', '/ready')).toMatchObject({ status: 200, body: { status: 'ready' } });
    const login = await call(url, 'POST', '/auth/login', { body: { email: 'admin@example.test', password: PASSWORD } });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.session_id).toEqual(expect.any(String));
    const me = await call(url, 'GET', '/auth/me', { session: login.body.session_id });
    expect(me.status, JSON.stringify(me.body)).toBe(200);

    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
    // On a supported runtime nothing warns at start; on Node 20 the one warning is its end of life.
    const runtime = runtimeSupport(process.versions.node);
    const output = s.stdout + s.stderr;
    if (runtime.status === 'ok') expect(output).not.toMatch(/warn|deprecat|experimental/i);
    else expect(output).toContain(runtime.message);
  });
});
