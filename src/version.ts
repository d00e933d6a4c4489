import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findPackageRoot } from './mail/package-root.js';

let version: string | null = null;

/** Gatehouse's version, from its package.json (read once). */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(path.join(findPackageRoot(import.meta.url), 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
