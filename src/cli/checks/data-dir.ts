import { accessSync, constants, statSync } from 'node:fs';
import { initHint } from '../database-file.js';
import { fail, ok, type Check } from './check.js';

/** The SQLite file, the outbox and pictures live in the data dir, so the server must write there. */
export const dataDirCheck: Check = {
  id: 'data-dir',
  title: 'Data directory writable',
  category: 'system',
  preflight: ['init', 'serve'],
  async run(ctx) {
    const config = ctx.requireConfig();
    const dir = config.dataDirAbs;
    try {
      if (!statSync(dir).isDirectory()) return fail(`${dir} is not a directory`, 'point --data-dir (or GATEHOUSE_DATA_DIR) at a directory');
    } catch {
      return fail(`${dir} does not exist`, initHint(config));
    }
    // access() rather than a probe file: the doctor writes nothing (it still sees a read-only mount).
    try {
      accessSync(dir, constants.W_OK);
    } catch (err) {
      return fail(`cannot write in ${dir} (${(err as NodeJS.ErrnoException).code})`, 'give the user running Gatehouse write access to it');
    }
    return ok(dir);
  },
};
