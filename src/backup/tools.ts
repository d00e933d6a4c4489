import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** Runs a program to completion; rejects with its stderr (or a clear "not installed") on failure. */
export function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; missing?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', (e: NodeJS.ErrnoException) => {
      reject(e.code === 'ENOENT' ? new ToolMissingError(cmd, opts.missing) : e);
    });
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} failed (exit ${code}): ${err.trim().split('\n').slice(-3).join('; ') || 'no message'}`));
    });
  });
}

/** A program Gatehouse needs is not installed; `pkg` names the package that brings it. */
export class ToolMissingError extends Error {
  constructor(
    readonly tool: string,
    readonly pkg?: string,
  ) {
    super(`${tool} is not installed${pkg ? ` (Debian/Ubuntu package: ${pkg})` : ''}`);
    this.name = 'ToolMissingError';
  }
}

export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (d) => h.update(d))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}
