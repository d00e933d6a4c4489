import { lstatSync } from 'node:fs';
import path from 'node:path';

/**
 * How to run this CLI again, for the commands the CLI suggests ("Start it: … serve"): `gatehouse`
 * when it was started through a link someone put on the PATH (install.sh's /usr/local/bin/gatehouse,
 * npm -g), `bin/gatehouse` from inside a checkout (there is no `gatehouse` on the PATH there), else
 * the path it was started by. Node keeps the link in argv[1]; a single executable has itself there.
 */
export function selfCommand(invoked = process.argv[1] ?? process.execPath, cwd = process.cwd()): string {
  const abs = path.resolve(invoked);
  try {
    if (lstatSync(abs).isSymbolicLink()) return 'gatehouse';
  } catch {
    return 'gatehouse';
  }
  const rel = path.relative(cwd, abs);
  if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.includes(path.sep) ? rel : `./${rel}`;
  return abs;
}
