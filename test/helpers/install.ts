// install.sh run in temp dirs for test/cli/install*.test.ts, and what a run could change on the host.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const INSTALL = path.join(ROOT, 'install.sh');
// Each install copies node_modules and runs the real TypeScript build.
export const INSTALL_TIMEOUT = 240_000;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function install(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile('bash', [INSTALL, ...args], { cwd: os.tmpdir(), maxBuffer: 64 * 1024 * 1024, timeout: INSTALL_TIMEOUT - 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** What a run could change on the host if it ignored its temp dirs. */
export function hostFootprint(): Record<string, boolean> {
  const paths = [
    '/etc/systemd/system/gatehouse.service',
    '/usr/local/bin/gatehouse',
    '/etc/gatehouse',
    '/etc/nginx/sites-available/gatehouse.conf',
    '/etc/nginx/conf.d/gatehouse.conf',
  ];
  const out: Record<string, boolean> = Object.fromEntries(paths.map((p) => [p, existsSync(p)]));
  out['passwd:gatehouse'] = /^gatehouse:/m.test(readFileSync('/etc/passwd', 'utf8'));
  return out;
}

const tempDirs: string[] = [];
export function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-install-'));
  tempDirs.push(dir);
  return dir;
}

/** For afterAll, with INSTALL_TIMEOUT: the installs hold copies of node_modules, slow to remove on a busy machine. */
export function removeInstallDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
