import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, requireSchema, withApp } from '../context.js';

export const registerSessions: CommandRegistrar = (program, rt) => {
  const sessions = program.command('sessions').description('Manage sessions: sessions prune');
  sessions
    .command('prune')
    .description('Delete expired sessions now (the session-expiry job also does it every 10 minutes)')
    .option('--json', 'print the result as JSON')
    .action(async (_opts, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(cmd);
      const deleted = await withApp(config, cliLogger(config, ui), async (app) => {
        await requireSchema(app);
        return app.services.sessions.pruneExpired({ batch: config.sessionExpiryBatch, max: config.sessionExpiryMaxPerRun });
      });
      ui.print(`${deleted} expired session${deleted === 1 ? '' : 's'} deleted`);
      ui.result({ success: true, deleted });
    });
};
