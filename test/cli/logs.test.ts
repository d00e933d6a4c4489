import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { BIN, cliEnv, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);
afterEach(stopStartedClis);

/** A readable log line: clock, level, message. */
const PRETTY = (level: string, msg: string) => new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} ${level} +${msg}`, 'm');

async function initDir(): Promise<string> {
  const dir = tempDir();
  const r = await runCli(['init', '--yes', '--data-dir', dir]);
  expect(r.code, r.stderr).toBe(0);
  return dir;
}

describe('logs for people', () => {
  it('when --verbose or LOG_LEVEL=debug is given to a command, then its debug lines show: JSON off a terminal, readable with LOG_FORMAT=pretty', async () => {
    const dir = await initDir();
    const json = await runCli(['doctor', '--verbose', '--data-dir', dir]);
    expect(json.code, json.stderr).toBe(0);
    const entry = json.stderr.split('\n').find((l) => l.includes('"msg":"configuration"'));
    expect(entry && JSON.parse(entry)).toMatchObject({ level: 20, dataDir: dir, mail: 'outbox' });

    const pretty = await runCli(['doctor', '--verbose', '--data-dir', dir], { env: { LOG_FORMAT: 'pretty' } });
    expect(pretty.stderr).toMatch(PRETTY('DEBUG', `configuration  dataDir=${dir}`));
    expect(pretty.stderr).toMatch(PRETTY('DEBUG', 'app context open  dialect=sqlite'));
    expect(pretty.stderr).not.toContain('{"level"');

    // LOG_LEVEL=debug is heard by one-shot commands too (the default, info, keeps them quiet).
    const debug = await runCli(['migrate', '--status', '--data-dir', dir], { env: { LOG_LEVEL: 'debug', LOG_FORMAT: 'pretty' } });
    expect(debug.stderr).toMatch(PRETTY('DEBUG', 'configuration'));
    const quiet = await runCli(['migrate', '--status', '--data-dir', dir], { env: { LOG_LEVEL: 'info' } });
    expect(quiet.stderr).toBe('');
  });

  it('when the log goes to a terminal, then lines are readable without LOG_FORMAT', async () => {
    const dir = await initDir();
    // script(1) gives the command a terminal, as an operator's shell would.
    const cmd = `${process.execPath} ${BIN} doctor --verbose --data-dir ${dir}`;
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { env: cliEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(r.stdout).toMatch(/\d\d:\d\d:\d\d\.\d{3} \x1b\[36mDEBUG\x1b\[0m configuration/);
    expect(r.stdout).not.toContain('{"level"');
  });

  it('when serve runs with LOG_FORMAT=pretty, then the start and each logged request are one readable line', async () => {
    const dir = await initDir();
    const s = startCli(['serve', '--port', '0', '--data-dir', dir], { env: { LOG_FORMAT: 'pretty', LOG_LEVEL: 'info' } });
    const url = (await s.waitFor(LISTENING))[1];
    expect(s.stdout).toMatch(PRETTY('INFO', 'Gatehouse listening on'));
    // At info only what is not 2xx (or slow) has an access line.
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect((await fetch(`${url}/nope`)).status).toBe(404);
    await s.waitFor(PRETTY('INFO', 'GET /nope 404 \\(\\d+ ms\\)  req=\\S+'));
    expect(s.stdout).not.toContain('GET /health');
    expect(s.stdout).not.toMatch(/^\{/m);
  });

  it('when LOG_FORMAT is neither pretty nor json, then the configuration is refused naming the key', async () => {
    const r = await runCli(['doctor', '--json', '--data-dir', tempDir()], { env: { LOG_FORMAT: 'xml' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('LOG_FORMAT');
  });

  it('when a pretty line is written, then secrets are redacted as in JSON', () => {
    let out = '';
    const sink = new Writable({ write: (c, _e, cb) => ((out += c), cb()) });
    createLogger('info', sink, 'pretty').info({ password: 'hunter2', user: { token: 'abc' }, n: 1 }, 'hello');
    expect(out).toMatch(/INFO {2}hello {2}password=\[redacted\] user=\{"token":"\[redacted\]"\} n=1/);
    expect(out).not.toContain('hunter2');
  });
});
