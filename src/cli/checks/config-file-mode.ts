import { statSync } from 'node:fs';
import { fail, ok, warn, type Check } from './check.js';

/** config.json holds secrets: only its owner may read it. */
export const configFileModeCheck: Check = {
  id: 'config-file-mode',
  title: 'Config file permissions',
  category: 'security',
  async run(ctx) {
    const config = ctx.requireConfig();
    const file = config.configFile;
    let mode: number;
    try {
      mode = statSync(file).mode & 0o777;
    } catch {
      return warn(`no ${file}; settings come from the environment only`, `run gatehouse init --data-dir ${config.dataDirAbs} to write one`);
    }
    const octal = `0${mode.toString(8)}`;
    const fix = `chmod 600 ${file}`;
    if (mode & 0o007) return fail(`${file} is readable by every user (mode ${octal})`, fix);
    if (mode & 0o070) return warn(`${file} is readable by its group (mode ${octal})`, fix);
    return ok(`mode ${octal}`);
  },
};
