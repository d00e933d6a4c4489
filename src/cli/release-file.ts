import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError } from './errors.js';
import type { Ui } from './ui.js';

/** How to run the new release's CLI: a tree with bin/gatehouse (run with this Node), or a single executable. */
export interface Release {
  command: string[];
  version: string;
  /** Whether a `.sha256` beside the tarball was checked (false: there was none). */
  checksumVerified: boolean;
  cleanup(): void;
}

export function runTo(cmd: string[], ui: Ui | null): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd[0], cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      // The new version's progress, shown as it comes.
      if (ui) for (const line of d.toString().split('\n')) if (line.trim()) ui.note(`    ${line.trim()}`);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The `<tarball>.sha256` a release ships beside it (`<hex>  <name>`, as sha256sum writes it), checked
 * before anything is unpacked. Absent: nothing to check (a tarball copied alone). Present and
 * different (or unreadable): refused, since the tarball is not the one that was published.
 */
async function verifyChecksum(tarball: string): Promise<boolean> {
  const file = `${tarball}.sha256`;
  if (!existsSync(file)) return false;
  const expected = /^([0-9a-f]{64})\b/i.exec(readFileSync(file, 'utf8').trim())?.[1]?.toLowerCase();
  if (!expected) throw new CliError(`--release: ${file} holds no sha256 checksum`, 'download the release and its .sha256 again');
  const { sha256File } = await import('../backup/tools.js');
  const actual = await sha256File(tarball);
  if (actual !== expected) {
    throw new CliError(
      `--release: ${tarball} does not match ${path.basename(file)} (sha256 ${actual}, expected ${expected})`,
      'download the release again; nothing was changed',
    );
  }
  return true;
}

/**
 * Opens `--release` (a tarball, an unpacked directory or a single executable) and asks it its
 * version. Every failure removes what was unpacked (a release is ~100 MB in the temp dir) and is
 * exit 1, as for `restore` of a bad archive; nothing of the instance is touched before this.
 */
export async function openRelease(spec: string): Promise<Release> {
  const abs = path.resolve(spec);
  if (!existsSync(abs)) throw new CliError(`--release: ${abs} does not exist`, 'check the path of the release tarball, directory or executable');
  let cleanup = () => {};
  try {
    let dir: string | null = null;
    let checksumVerified = false;
    if (statSync(abs).isDirectory()) dir = abs;
    else if (/\.(tar\.gz|tgz)$/.test(abs)) {
      checksumVerified = await verifyChecksum(abs);
      const tmp = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-release-'));
      cleanup = () => rmSync(tmp, { recursive: true, force: true });
      const { run, ToolMissingError } = await import('../backup/tools.js');
      await run('tar', ['-xzf', abs, '-C', tmp], { missing: 'tar' }).catch((err: Error) => {
        if (err instanceof ToolMissingError) throw new CliError(err.message, 'install it: apt-get install -y tar');
        throw new CliError(`--release: ${abs} is not a readable archive (${err.message})`, 'download the release again');
      });
      // A release tarball holds one top-level directory (gatehouse-<version>/).
      const top = readdirSync(tmp);
      dir = top.length === 1 && statSync(path.join(tmp, top[0])).isDirectory() ? path.join(tmp, top[0]) : tmp;
    }
    let command = [abs];
    if (dir) {
      const bin = path.join(dir, 'bin', 'gatehouse');
      const exe = path.join(dir, 'gatehouse');
      // A release tarball carries the single executable (self-contained) next to the sources.
      if (existsSync(exe) && statSync(exe).isFile()) command = [exe];
      else if (existsSync(bin)) command = [process.execPath, bin];
      else
        throw new CliError(
          `--release: ${abs} holds no Gatehouse (no bin/gatehouse or gatehouse executable)`,
          'name the release tarball or its unpacked directory',
        );
    }
    const v = await runTo([...command, '--version'], null).catch(() => null);
    if (!v || v.code !== 0) throw new CliError(`--release: ${abs} does not run (${v?.stderr.trim().split('\n').pop() ?? 'cannot start it'})`);
    return { command, version: v.stdout.trim(), checksumVerified, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}
