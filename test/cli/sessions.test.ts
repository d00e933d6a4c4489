import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freePort, startOwnRedis, type OwnRedis } from '../helpers/redis-server.js';
import { call, json, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

const PASSWORD = 'Sessions-From-The-Cli-42';
let redis: OwnRedis | null = null;

afterAll(async () => {
  removeTempDirs();
  await redis?.close();
});
afterEach(stopStartedClis);

describe('gatehouse sessions list / revoke', () => {
  it('when sessions are revoked on the embedded default (no Redis), then the running server drops its cached copies at once', async () => {
    const env = { PORT: String(await freePort()) };
    const dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir], { env })).code).toBe(0);
    const email = `embedded.${Date.now()}@example.test`;
    const created = await runCli(['user', 'create', '--type', 'customer', '--email', email, '--password-stdin', '--data-dir', dir], { env, input: PASSWORD });
    expect(created.code, created.stderr).toBe(0);
    const s = startCli(['serve', '--data-dir', dir], { env });
    const url = (await s.waitFor(LISTENING))[1];
    const session = (await call(url, 'POST', '/auth/login', { body: { email, password: PASSWORD } })).body.session_id as string;
    expect((await call(url, 'GET', '/auth/me', { session })).status).toBe(200);

    const revoked = await runCli(['sessions', 'revoke', '--user', email, '--data-dir', dir], { env });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout + revoked.stderr).not.toContain('no running server answered');
    expect((await call(url, 'GET', '/auth/me', { session })).status).toBe(401);
    s.child.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);
  });

  it("when an operator lists and revokes a user's sessions, then a running server refuses them at once (its caches are told)", async () => {
    redis = await startOwnRedis();
    const env = { REDIS_URL: redis.url };
    const dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir], { env })).code).toBe(0);
    const email = `ops.${Date.now()}@example.test`;
    const created = await runCli(['user', 'create', '--type', 'customer', '--email', email, '--password-stdin', '--data-dir', dir], { env, input: PASSWORD });
    expect(created.code, created.stderr).toBe(0);

    const s = startCli(['serve', '--port', '0', '--data-dir', dir], { env });
    const url = (await s.waitFor(LISTENING))[1];
    const login = async () => (await call(url, 'POST', '/auth/login', { body: { email, password: PASSWORD } })).body.session_id as string;
    const [first, second] = [await login(), await login()];
    // Validated once, so the server holds both in its caches.
    for (const session of [first, second]) expect((await call(url, 'GET', '/auth/me', { session })).status).toBe(200);

    const listed = await runCli(['sessions', 'list', '--user', email.toUpperCase(), '--json', '--data-dir', dir], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const doc = json(listed);
    expect(doc.user.email).toBe(email);
    expect(doc.sessions).toHaveLength(2);
    expect(doc.sessions[0]).toMatchObject({ status: 'active', session_prefix: expect.any(String) });
    expect(listed.stdout).not.toContain(first);
    const firstId = doc.sessions.find((r: { session_prefix: string }) => first.startsWith(r.session_prefix)).id as string;

    const one = await runCli(['sessions', 'revoke', '--id', firstId, '--json', '--data-dir', dir], { env });
    expect(one.code, one.stderr).toBe(0);
    expect(json(one)).toEqual({ success: true, revoked: 1 });
    expect((await call(url, 'GET', '/auth/me', { session: first })).status).toBe(401);
    expect((await call(url, 'GET', '/auth/me', { session: second })).status).toBe(200);

    const all = await runCli(['sessions', 'revoke', '--user', email, '--data-dir', dir], { env });
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain('1 session revoked');
    expect((await call(url, 'GET', '/auth/me', { session: second })).status).toBe(401);
    // Both revocations are in the audit record, the CLI as actor, the session named by its prefix only.
    const revokedEvents = await runCli(['audit', 'list', '--user', email, '--type', 'session.revoked', '--json', '--data-dir', dir], { env });
    expect(revokedEvents.code, revokedEvents.stderr).toBe(0);
    const events = json(revokedEvents).events as { actor: unknown; details: Record<string, unknown> }[];
    expect(events.map((e) => [e.actor, e.details.by, e.details.count])).toEqual([
      [{ via: 'cli' }, 'cli', 1],
      [{ via: 'cli' }, 'cli', 1],
    ]);
    expect(revokedEvents.stdout).not.toContain(first);
    expect(revokedEvents.stdout).not.toContain(second);

    const again = await runCli(['sessions', 'revoke', '--id', firstId, '--data-dir', dir], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no session with the id ${firstId}`);
    const nobody = await runCli(['sessions', 'list', '--user', 'nobody@example.test', '--json', '--data-dir', dir], { env });
    expect(nobody.code).toBe(1);
    expect(json(nobody)).toMatchObject({ success: false, error: 'no user with the email nobody@example.test' });
    for (const args of [[], ['--user', email, '--id', firstId]]) {
      const usage = await runCli(['sessions', 'revoke', ...args, '--data-dir', dir], { env });
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('exactly one of --user EMAIL or --id ID');
    }
    s.child.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);
  });
});

describe('gatehouse version', () => {
  it('when asked with --json, then it names the Gatehouse version and the Node.js runtime', async () => {
    const r = await runCli(['version', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toEqual({ gatehouse: expect.stringMatching(/^\d+\.\d+\.\d+/), node: process.version });
    const plain = await runCli(['version']);
    expect(plain.stdout).toMatch(/^gatehouse \d+\.\d+\.\d+\S* \(Node\.js v\d+/);
  });
});
