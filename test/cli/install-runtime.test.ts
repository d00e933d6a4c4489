import { execFile } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, ROOT, tempDir } from '../helpers/cli.js';

/*
 * install.sh's Node.js check with a stand-in `node` first on PATH that reports a given version; the
 * source is an empty dir, so the run stops right after the check, having changed nothing.
 */

afterAll(removeTempDirs);

function installWithNode(version: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = tempDir('gh-install-node-');
  writeFileSync(path.join(dir, 'node'), `#!/bin/sh\necho ${version}\n`);
  chmodSync(path.join(dir, 'node'), 0o755);
  const args = ['--no-systemd', '--skip-build', '--skip-init', '--source', tempDir(), '--prefix', path.join(dir, 'opt'), '--data-dir', path.join(dir, 'data')];
  return new Promise((resolve) =>
    execFile('bash', [path.join(ROOT, 'install.sh'), ...args], { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    ),
  );
}

describe('install.sh on each Node.js line', () => {
  it('when Node.js is 20, then it goes on but warns that 20 reached end of life and names 22 and 24', async () => {
    const r = await installWithNode('20.20.2');
    expect(r.stdout).toContain('Checking Node.js (supported: 22 and 24 LTS)');
    expect(r.stderr).toContain('install.sh: warning: Node.js 20.20.2: Node.js 20 reached end of life on 2026-04-30');
    expect(r.stderr).toContain('is not a Gatehouse source tree');
  });

  it('when Node.js is 24 or 22, then it says nothing about the runtime', async () => {
    for (const version of ['24.21.0', '22.22.0']) {
      const r = await installWithNode(version);
      expect(r.stderr).not.toMatch(/warning/);
      expect(r.stderr).toContain('is not a Gatehouse source tree');
    }
  });

  it('when Node.js is older than 20.19, then it refuses and points at Node.js 24', async () => {
    const r = await installWithNode('20.18.0');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/too old; Gatehouse needs >= 20\.19\.0 and supports 22 and 24 LTS/);
    expect(r.stderr).toContain('setup_24.x');
  });
});
