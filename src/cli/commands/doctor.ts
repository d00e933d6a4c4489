import type { CommandRegistrar } from '../context.js';
import { ConfigError } from '../../config/load-config.js';
import type { Config } from '../../config/schema.js';
import { createLogger } from '../../log/logger.js';
import { createCheckContext, runChecks, type CheckOutcome } from '../checks/check.js';
import { doctorChecks } from '../checks/index.js';
import { cliLogger, commandUi, loadCliConfig, openApp } from '../context.js';

const LABEL = { ok: 'ok', warn: 'warn', fail: 'FAIL', skip: 'skip' } as const;

export const registerDoctor: CommandRegistrar = (program, rt) => {
  program
    .command('doctor')
    .description('Check the installation: Node.js, config, data dir, database, migrations, Redis, SMTP, secrets')
    .option('--json', 'print the checks as JSON')
    .action(async (_opts, cmd) => {
      const ui = commandUi(rt, cmd);
      let config: Config | null = null;
      let configError: Error | null = null;
      try {
        config = loadCliConfig(rt, cmd);
      } catch (err) {
        // A bad configuration is the doctor's first finding, not a reason to stop.
        if (!(err instanceof ConfigError)) throw err;
        configError = err;
      }
      const logger = config ? cliLogger(config, ui) : createLogger('warn', rt.streams.stderr);
      const ctx = createCheckContext({ config, configError, logger, readOnly: true, modules: rt.modules, openApp: (c) => openApp(rt, c, logger) });
      const width = Math.max(...doctorChecks().map((c) => c.title.length));
      const show = (o: CheckOutcome) => {
        ui.print(`  ${LABEL[o.status].padEnd(5)} ${o.title.padEnd(width)}  ${o.message}`);
        if (o.hint && (o.status === 'fail' || o.status === 'warn')) ui.print(`  ${' '.repeat(5)} ${' '.repeat(width)}  → ${o.hint}`);
      };
      let results: CheckOutcome[];
      try {
        results = await runChecks(doctorChecks(), ctx, show);
      } finally {
        await ctx.close();
      }
      const count = (s: CheckOutcome['status']) => results.filter((r) => r.status === s).length;
      const failed = count('fail');
      ui.print(
        `\n${results.length} checks: ${count('ok')} ok, ${count('warn')} warning${count('warn') === 1 ? '' : 's'}, ${failed} failed${count('skip') ? `, ${count('skip')} skipped` : ''}`,
      );
      ui.result({ success: failed === 0, checks: results });
      if (failed) rt.exitCode = 1;
    });
};
