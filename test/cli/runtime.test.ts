import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { json, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';
import { node24, NODE24_VERSION } from '../helpers/node24.js';

/*
 * Node 24 LTS is the runtime Gatehouse ships: the CLI and the server run on it without a word of warning
 * (Node's own deprecation or experimental warnings, a dependency's, or the doctor's runtime check).
 */

let node: string;
let dir: string;

beforeAll(async () => {
  node = node24();
  dir = tempDir('gh-node24-');
  const init = await runCli(['init', '--yes', '--data-dir', dir], { node });
  expect(init.code, init.stderr).toBe(0);
  expect(init.stderr).not.toMatch(/warn|deprecat|experimental|^\s*!/im);
}, 300_000);
afterAll(removeTempDirs);
afterEach(stopStartedClis);

describe(`Node ${NODE24_VERSION}`, () => {
  it('when the pinned runtime runs, then it is the version release/node24 pins', async () => {
    const { execFileSync } = await import('node:child_process');
    expect(execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${NODE24_VERSION}`);
  });

  it('when doctor runs on it, then the Node.js check is ok and calls it a supported LTS line', async () => {
    const r = await runCli(['doctor', '--json', '--data-dir', dir], { node });
    const check = json(r).checks.find((c: { id: string }) => c.id === 'node-version');
    expect(check).toMatchObject({ status: 'ok', message: expect.stringContaining(`${NODE24_VERSION} (Node.js 24 LTS, supported until`) });
  });

  it('when serve starts on it, then nothing prints a warning (runtime, deprecation, experimental) and it answers', async () => {
    const s = startCli(['serve', '--port', '0', '--data-dir', dir], { node, env: { LOG_LEVEL: 'info' } });
    const url = (await s.waitFor(LISTENING))[1]!;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.stderr).toBe('');
    for (const line of s.stdout.trim().split('\n')) expect(JSON.parse(line).level, line).toBeLessThan(40);
    expect(s.stdout).not.toMatch(/warn|deprecat|experimental/i);
  });
});
