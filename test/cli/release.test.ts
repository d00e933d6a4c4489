import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, removeTempDirs, ROOT, runCli, tempDir } from '../helpers/cli.js';
import { NODE24_VERSION } from '../helpers/node24.js';

/*
 * npm run release builds the single executable (Node's SEA) and the release tarball. The executable
 * is then run the way a host without Node runs it: an environment with no node on PATH.
 */

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
const TARBALL = path.join(ROOT, 'build', 'release', `gatehouse-${pkg.version}.tar.gz`);
let exe: string;
let unpacked: string;

/** No node, no npm on PATH: only the executable and the system's own tools. */
const NO_NODE_ENV = {
  PATH:
    '/usr/sbin:/usr/bin:/sbin:/bin'
      .split(':')
      .filter((d) => !existsSync(path.join(d, 'node')))
      .join(':') || '/nonexistent',
  HOME: os.tmpdir(),
  LOG_LEVEL: 'warn',
  BCRYPT_ROUNDS: '4',
};

function sea(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(exe, args, { env: NO_NODE_ENV, cwd: os.tmpdir(), timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/** What `npm run release` printed on stderr (its progress, and any warning). */
let buildLog = '';

beforeAll(() => {
  const built = spawnSync('npm', ['run', 'release'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 240_000 });
  buildLog = built.stderr ?? '';
  if (built.status !== 0) throw new Error(`npm run release failed (exit ${built.status}):\n${buildLog}`);
  unpacked = tempDir('gh-release-');
  execFileSync('tar', ['-xzf', TARBALL, '-C', unpacked]);
  exe = path.join(unpacked, `gatehouse-${pkg.version}`, 'gatehouse');
}, 300_000);
afterAll(removeTempDirs);

describe('npm run release', () => {
  it("when run, then it prints its progress and no warning (postject's known LIEF note-section lines are dropped)", () => {
    expect(buildLog).toContain('done: build/gatehouse');
    expect(buildLog).not.toMatch(/warning/i);
  });

  it('when run, then the tarball holds the sources install.sh needs and the executable, and its sha256 file matches', () => {
    const sum = readFileSync(`${TARBALL}.sha256`, 'utf8').split(/\s+/)[0];
    expect(createHash('sha256').update(readFileSync(TARBALL)).digest('hex')).toBe(sum);
    const top = path.join(unpacked, `gatehouse-${pkg.version}`);
    for (const entry of ['gatehouse', 'install.sh', 'package.json', 'package-lock.json', 'src', 'entry', 'bin', 'templates', 'modules']) {
      expect(existsSync(path.join(top, entry)), entry).toBe(true);
    }
    expect(readdirSync(path.join(top, 'src')).length).toBeGreaterThan(5);
    expect(statSync(exe).mode & 0o111).not.toBe(0);
  });

  it('when install.sh is pointed at the unpacked tarball, then it accepts it as a source tree', () => {
    const dir = tempDir();
    const out = execFileSync(
      'bash',
      [
        path.join(unpacked, `gatehouse-${pkg.version}`, 'install.sh'),
        '--no-systemd',
        '--skip-build',
        '--skip-init',
        '--prefix',
        path.join(dir, 'opt'),
        '--data-dir',
        path.join(dir, 'data'),
      ],
      { encoding: 'utf8' },
    );
    expect(out).toContain(`copied sources from ${path.join(unpacked, `gatehouse-${pkg.version}`)}`);
    expect(existsSync(path.join(dir, 'opt', 'entry', 'cli.ts'))).toBe(true);
  });
});

describe('gatehouse upgrade --release with the tarball', () => {
  it('when given the release tarball, then the executable inside it runs the migrations', async () => {
    const dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
    const r = await runCli(['upgrade', '--release', TARBALL, '--json', '--data-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ success: true, from: pkg.version, to: pkg.version });
    expect(existsSync(json(r).backup)).toBe(true);
  });
});

describe('the single executable, with no Node on PATH', () => {
  it('when init --yes and serve run, then it serves the API, the reference and metrics, and doctor passes', async () => {
    expect(execFileSync('/bin/sh', ['-c', 'command -v node || echo none'], { env: NO_NODE_ENV, encoding: 'utf8' }).trim()).toBe('none');
    const dir = tempDir();
    const init = await sea(['init', '--yes', '--data-dir', dir, '--admin-email', 'admin@example.test']);
    expect(init.code, init.stderr).toBe(0);
    const password = /password:\s+(\S+)/.exec(init.stdout)?.[1];
    expect(password).toBeTruthy();
    const doctor = await sea(['doctor', '--json', '--data-dir', dir]);
    expect(doctor.code, doctor.stdout).toBe(0);
    // It ships the pinned Node 24 LTS (release/node24), whatever node built it.
    expect(json(doctor).checks.find((c: { id: string }) => c.id === 'node-version')).toMatchObject({
      status: 'ok',
      message: expect.stringContaining(`${NODE24_VERSION} (Node.js 24 LTS`),
    });

    const child = spawn(exe, ['serve', '--port', '0', '--data-dir', dir], { env: NO_NODE_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not listening:\n${out}`)), 30_000);
        child.stdout.on('data', () => {
          const m = /Gatehouse listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
      });
      expect((await fetch(`${url}/ready`)).status).toBe(200);
      const login = await fetch(`${url}/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'admin@example.test', password }),
      });
      expect(login.status).toBe(200);
      // bcrypt and sqlite3 are native addons: loaded from the executable's assets.
      expect(((await login.json()) as { session_id: string }).session_id).toMatch(/^ses_/);
      const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { openapi: string; info: { version: string } };
      expect(doc).toMatchObject({ openapi: '3.1.0', info: { version: pkg.version } });
      expect((await fetch(`${url}/docs/swagger-ui-bundle.js`)).status).toBe(200);
      // The hosted pages, their templates and assets (templates/web) from inside the executable.
      const page = await fetch(`${url}/login`);
      const html = await page.text();
      expect(page.status, html).toBe(200);
      const css = /href="(\/web\/assets\/[^"]+\.css)"/.exec(html)?.[1];
      expect(css, html).toBeTruthy();
      const sheet = await fetch(`${url}${css}`);
      expect([sheet.status, sheet.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
      expect((await sheet.text()).length).toBeGreaterThan(1000);
      expect(await (await fetch(`${url}/metrics`)).text()).toContain('gatehouse_logins_total{outcome="success"} 1');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    expect(child.exitCode).toBe(0);
  });

  it('when a mail template is rendered, then the templates inside the executable are used', async () => {
    const dir = tempDir();
    expect((await sea(['init', '--yes', '--data-dir', dir])).code).toBe(0);
    const r = await sea(['mail', 'test', '--to', 'someone@example.test', '--data-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    const outbox = path.join(dir, 'outbox');
    const files = readdirSync(outbox);
    expect(files.length).toBeGreaterThan(0);
    expect(readFileSync(path.join(outbox, files[0]), 'utf8')).toMatch(/Gatehouse/);
  });
});
