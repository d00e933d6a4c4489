import type { CommandRegistrar } from '../context.js';
import { commandUi } from '../context.js';
import { packageVersion } from '../../version.js';

/** `-V` prints the bare version for scripts; this names the runtime too, which a bug report needs. */
export const registerVersion: CommandRegistrar = (program, rt) => {
  program
    .command('version')
    .description('Print the Gatehouse version and the Node.js runtime it runs on')
    .option('--json', 'print {"gatehouse", "node"} as JSON')
    .action((_opts, cmd) => {
      const ui = commandUi(rt, cmd);
      ui.print(`gatehouse ${packageVersion()} (Node.js ${process.version})`);
      ui.result({ gatehouse: packageVersion(), node: process.version });
    });
};
