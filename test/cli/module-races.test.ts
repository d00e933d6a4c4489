import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { json, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);
afterEach(stopStartedClis);

/**
 * The operator switches modules with the CLI while the server serves. On the embedded default both
 * processes write the same SQLite file: a switch used to fail with SQLITE_BUSY, and a request in
 * flight while its module's data was dropped used to end in a 500.
 */
describe('gatehouse module commands against a serving instance (SQLite)', () => {
  let dir: string;
  let url: string;
  let token: string;

  beforeAll(async () => {
    dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
    expect((await runCli(['module', 'install', 'privacy', '--yes', '--data-dir', dir])).code).toBe(0);
  });

  async function start(): Promise<void> {
    const s = startCli(['serve', '--port', '0', '--data-dir', dir], { env: { BCRYPT_ROUNDS: '4', RATE_LIMITS_ENABLED: 'false' } });
    url = (await s.waitFor(LISTENING))[1];
    const created = await runCli(
      ['user', 'create', '--type', 'customer', '--email', `race.${Date.now()}@example.test`, '--password-stdin', '--json', '--data-dir', dir],
      {
        input: 'Correct-Horse-42\n',
      },
    );
    expect(created.code, created.stderr).toBe(0);
    const login = await fetch(`${url}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: json(created).user?.email ?? json(created).email, password: 'Correct-Horse-42' }),
    });
    token = ((await login.json()) as { session_id: string }).session_id;
  }

  /** Requests from three clients at once until `stop` resolves; returns every status with its body. */
  async function traffic(stop: Promise<unknown>, send: () => Promise<Response>) {
    let done = false;
    void stop.finally(() => (done = true));
    const out: { status: number; body: unknown }[] = [];
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        while (!done) {
          const r = await send();
          out.push({ status: r.status, body: await r.json().catch(() => null) });
        }
      }),
    );
    return out;
  }

  it('when privacy is switched off and on while requests write, then every switch succeeds and no request gets a 500', async () => {
    await start();
    const switches = (async () => {
      const codes: (number | null)[] = [];
      for (const action of ['disable', 'enable', 'disable', 'enable']) {
        const r = await runCli(['module', action, 'privacy', '--json', '--data-dir', dir]);
        codes.push(r.code);
        expect(r.code, r.stdout + r.stderr).toBe(0);
      }
      return codes;
    })();
    const seen = await traffic(switches, () =>
      fetch(`${url}/auth/user/me`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json', 'X-Session-ID': token },
        body: JSON.stringify({ name: `n${Math.random()}` }),
      }),
    );
    expect(await switches).toEqual([0, 0, 0, 0]);
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.filter((r) => r.status >= 500)).toEqual([]);
  });

  it('when privacy is uninstalled with its data while exports run, then each export is answered 200 or 404/503, never 500', async () => {
    await start();
    const uninstall = runCli(['module', 'uninstall', 'privacy', '--drop-data', '--yes', '--json', '--data-dir', dir]);
    const seen = await traffic(uninstall, () => fetch(`${url}/auth/user/me/privacy/export`, { headers: { 'X-Session-ID': token } }));
    expect((await uninstall).code).toBe(0);
    expect(seen.filter((r) => r.status === 200).length).toBeGreaterThan(0);
    expect(seen.filter((r) => ![200, 404, 503].includes(r.status))).toEqual([]);
  });
});
