import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory holding package.json above `fromUrl`. Walking up (rather than a fixed "../..") finds
 * the same root from src/mail/*.ts under vitest and from dist/src/mail/*.js after the build.
 */
export function findPackageRoot(fromUrl: string = import.meta.url): string {
  let dir = path.dirname(fileURLToPath(fromUrl));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`No package.json found above ${fileURLToPath(fromUrl)}`);
    dir = parent;
  }
}
