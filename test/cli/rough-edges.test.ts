import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BIN, cliEnv, json, LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);
afterEach(stopStartedClis);

/** `gatehouse ...args | head -1` through a real shell pipe. */
function pipedToHead(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    // The CLI's own stderr and exit status, while head reads only the first line of its stdout.
    const script = `set -o pipefail; ${quoted} 2>"$ERRFILE" | head -n 1; echo "status:\${PIPESTATUS[0]}"`;
    const errFile = path.join(tempDir(), 'stderr');
    const child = spawn('bash', ['-c', script], { env: { ...cliEnv(), ERRFILE: errFile }, cwd: os.tmpdir() });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.on('close', () => {
      const status = /status:(\d+)/.exec(stdout);
      resolve({ code: status ? Number(status[1]) : null, stdout, stderr: readFileSync(errFile, 'utf8') });
    });
  });
}

describe('rough edges of the CLI', () => {
  it('when doctor and help are piped into head -1, then there is no EPIPE crash and no stack trace', async () => {
    const dir = tempDir();
    for (const args of [['doctor', '--data-dir', dir], ['help']]) {
      const r = await pipedToHead(args);
      expect(r.stderr, args.join(' ')).not.toContain('EPIPE');
      expect(r.stderr, args.join(' ')).not.toContain('    at ');
      expect(r.stdout.split('\n')[0].length).toBeGreaterThan(0);
      // doctor exits 1 (this dir has no config), or quietly when the pipe closed first; never a crash code.
      expect([0, 1], args.join(' ')).toContain(r.code);
    }
  });

  it('when a usage error happens with --json, then stdout holds one JSON document and the exit code is 2', async () => {
    for (const args of [
      ['migrate', '--bogus', '--json'],
      ['doctor', '--json', '--nope'],
      ['serve', '--port', 'abc', '--json'],
    ]) {
      const r = await runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      const doc = json(r);
      expect(doc).toMatchObject({ success: false, code: 'USAGE', hint: expect.stringContaining('--help') });
      expect(typeof doc.error).toBe('string');
    }
  });

  it('when a usage error has no hint of its own, then it still points at --help', async () => {
    const r = await runCli(['init', '--admin-name', 'Ann', '--data-dir', tempDir()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: --admin-password-stdin, --admin-password-file and --admin-name need --admin-email');
    expect(r.stderr).toContain('hint: run with --help for usage');
  });

  it('when --port is not a number, then serve and init exit 2 with a clear message, not schema text', async () => {
    for (const cmd of ['serve', 'init']) {
      const r = await runCli([cmd, '--port', 'abc', '--data-dir', tempDir()]);
      expect(r.code, cmd).toBe(2);
      expect(r.stderr).toContain("'--port <n>' argument 'abc' is invalid. expected a port number from 0 to 65535");
      expect(r.stderr).not.toContain('Invalid configuration');
    }
  });

  it('when asked "gatehouse help" or "gatehouse help migrate", then it shows the help and exits 0', async () => {
    const all = await runCli(['help']);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^ {2}doctor\b/m);
    const one = await runCli(['help', 'migrate']);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('Usage: gatehouse migrate');
    expect(one.stdout).toContain('--dry-run');
  });

  it('when the bridge secret is shorter than 32 characters, then serve refuses to start with the rule doctor applies', async () => {
    const dir = tempDir();
    const r = await runCli(['serve', '--port', '0', '--migrate', '--data-dir', dir], { env: { BRIDGE_VALIDATION_SECRET: 'only-twenty-nine-characters!!' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/BRIDGE_VALIDATION_SECRET \(from environment\): shorter than 32 characters; generate one with: openssl rand -base64 32/);
    expect(r.stdout).not.toContain('listening');
  });

  it('when migrate runs on an up-to-date schema of one migration or more, then the count is worded right', async () => {
    const dir = tempDir();
    expect((await runCli(['migrate', '--data-dir', dir])).code).toBe(0);
    const again = await runCli(['migrate', '--data-dir', dir]);
    expect(again.stdout).toMatch(/\(\d+ migrations applied\)/);
    expect(again.stdout).not.toMatch(/\b1 migrations\b/);
  });
});

describe('gatehouse limits reset', () => {
  it('when neither --email nor --ip is given, or --ip is no address, then it is a usage error', async () => {
    const none = await runCli(['limits', 'reset', '--data-dir', tempDir()]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('limits reset needs --email, --ip, or both');
    const bad = await runCli(['limits', 'reset', '--ip', 'localhost', '--data-dir', tempDir()]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--ip: not an IP address: localhost');
  });
});

describe('the environment file the service runs with', () => {
  it('when init is given --environment-file, then config.json records it and doctor --data-dir alone reads what serve reads', async () => {
    const dir = tempDir();
    const envFile = path.join(tempDir(), 'gatehouse.env');
    writeFileSync(envFile, '# as install.sh writes it\nLOG_LEVEL=warn\n');
    const init = await runCli(['init', '--yes', '--json', '--data-dir', dir, '--environment-file', envFile]);
    expect(init.code, init.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')).GATEHOUSE_ENV_FILE).toBe(envFile);
    expect((await runCli(['doctor', '--data-dir', dir])).code).toBe(0);

    // A value in the env file now reaches doctor and serve alike, without naming the file again.
    writeFileSync(envFile, 'PORT="not-a-port"\n');
    const doctor = await runCli(['doctor', '--data-dir', dir]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(
      new RegExp(
        `FAIL\\s+Configuration valid\\s+PORT \\(env file ${envFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): expected a whole number from 0 to 65535`,
      ),
    );
    const serve = await runCli(['serve', '--data-dir', dir]);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain(`PORT (from env file ${envFile})`);

    // The environment still overrides the file, as it does for the service under systemd.
    writeFileSync(envFile, 'PORT=0\n');
    const s = startCli(['serve', '--data-dir', dir]);
    await s.waitFor(LISTENING);
    s.child.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);
  });

  it('when the env file cannot be read, then the command says which file and why', async () => {
    const dir = tempDir();
    const r = await runCli(['doctor', '--json', '--data-dir', dir, '--environment-file', path.join(dir, 'missing.env')]);
    expect(r.code).toBe(1);
    const config = json(r).checks.find((c: { id: string }) => c.id === 'config');
    expect(config.status).toBe('fail');
    expect(config.message).toContain(`cannot read ${path.join(dir, 'missing.env')}: ENOENT`);
  });
});
