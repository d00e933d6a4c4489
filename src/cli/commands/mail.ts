import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, requireSchema, withApp } from '../context.js';
import { registerMailOutbox } from './mail-outbox.js';
import { registerMailCommands } from './mail-test.js';

/** `gatehouse mail test --to ADDRESS` (mail-test.ts) and `gatehouse mail outbox` (mail-outbox.ts). */
export const registerMail: CommandRegistrar = (program, rt) => {
  const mail = registerMailCommands(program, {
    withApp(fn) {
      // Global options live on the program; the mail command has no config flags of its own.
      const ui = commandUi(rt, program);
      const config = loadCliConfig(rt, program);
      return withApp(rt, config, cliLogger(config, ui), async (app) => {
        await requireSchema(app);
        return fn(app);
      });
    },
    print(human, json, opts) {
      if (opts.json) rt.streams.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
      else rt.streams.stdout.write(`${human}\n`);
    },
  });
  registerMailOutbox(mail, rt);
};
