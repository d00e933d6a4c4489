import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { limitsResetKey } from '../../src/services/limit-reset.js';
import { freePort } from '../helpers/redis-server.js';
import { call, json, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);
afterEach(stopStartedClis);

/** An initialised data dir with one customer, and a running `serve` on the embedded default (no Redis). */
async function serving() {
  const dir = tempDir();
  const cli = (...args: string[]) => runCli([...args, '--data-dir', dir]);
  expect((await cli('init', '--yes')).code).toBe(0);
  const user = json(await cli('user', 'create', '--json', '--email', 'locked@example.com', '--type', 'customer'));
  const port = await freePort();
  const s = startCli(['serve', '--port', String(port), '--data-dir', dir]);
  const url = (await s.waitFor(LISTENING))[1];
  const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, string>;
  const key = limitsResetKey({ cookieSecret: config.COOKIE_SECRET, bridgeSecret: config.BRIDGE_VALIDATION_SECRET })!;
  return { dir, cli, port, url, key, password: user.password as string };
}

describe('gatehouse limits reset without Redis', () => {
  it('when a user is locked out by failed logins, then limits reset reaches the running server and the user signs in again', async () => {
    const { cli, port, url, password } = await serving();
    const login = (pw: string) => call(url, 'POST', '/auth/login', { body: { email: 'locked@example.com', password: pw } });
    for (let i = 0; i < 5; i++) expect((await login('Wrong-Password-1')).status).toBe(401);
    expect((await login(password)).status).toBe(429);

    const r = await cli('limits', 'reset', '--email', 'LOCKED@example.com', '--ip', '127.0.0.1', '--port', String(port), '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ success: true, cleared: expect.arrayContaining(['every route class for 127.0.0.1']) });
    expect(json(r).cleared).toHaveLength(3);
    expect((await login(password)).status).toBe(200);
  });

  it('when the reset endpoint is called without the key, with a wrong one, or through a proxy, then it is refused', async () => {
    const { url, key } = await serving();
    const reset = (headers: Record<string, string>) =>
      fetch(`${url}/internal/limits/reset`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: '{"ip":"127.0.0.1"}' });
    expect((await reset({})).status).toBe(401);
    expect((await reset({ 'X-Gatehouse-Admin-Key': 'x'.repeat(43) })).status).toBe(401);
    expect((await reset({ 'X-Gatehouse-Admin-Key': key, 'X-Forwarded-For': '203.0.113.9' })).status).toBe(403);
    const bad = await fetch(`${url}/internal/limits/reset`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Gatehouse-Admin-Key': key },
      body: '{}',
    });
    expect(bad.status).toBe(400);
    expect((await reset({ 'X-Gatehouse-Admin-Key': key })).status).toBe(200);
  });

  it('when no server answers on the port, then it says so and how to proceed (exit 1)', async () => {
    const dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
    const r = await runCli(['limits', 'reset', '--ip', '127.0.0.1', '--port', String(await freePort()), '--json', '--data-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no gatehouse serve answered on http://127.0.0.1:');
    expect(json(r)).toMatchObject({ success: false, hint: expect.stringContaining('--port') });
  });
});
