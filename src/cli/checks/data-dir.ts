import { randomBytes } from 'node:crypto';
import { statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fail, ok, type Check } from './check.js';

/** The SQLite file, the outbox and pictures live in the data dir, so the server must write there. */
export const dataDirCheck: Check = {
  id: 'data-dir',
  title: 'Data directory writable',
  category: 'system',
  preflight: ['init', 'serve'],
  async run(ctx) {
    const dir = ctx.requireConfig().dataDirAbs;
    try {
      if (!statSync(dir).isDirectory()) return fail(`${dir} is not a directory`, 'point --data-dir (or GATEHOUSE_DATA_DIR) at a directory');
    } catch {
      return fail(`${dir} does not exist`, `run gatehouse init --data-dir ${dir}`);
    }
    const probe = path.join(dir, `.write-test-${randomBytes(4).toString('hex')}`);
    try {
      writeFileSync(probe, '');
      unlinkSync(probe);
    } catch (err) {
      return fail(`cannot write in ${dir} (${(err as NodeJS.ErrnoException).code})`, 'give the user running Gatehouse write access to it');
    }
    return ok(dir);
  },
};
