import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, withApp } from '../context.js';
import { UsageError } from '../errors.js';

export const registerLimits: CommandRegistrar = (program, rt) => {
  const limits = program.command('limits').description('Rate limits: limits reset');
  limits
    .command('reset')
    .description('Clear the limits that keep a user or an address out (failed-login lock, login budgets, per-address budgets)')
    .option('--email <email>', 'the account (email or user name) to let in again')
    .option('--ip <address>', 'the client address to let in again (with --email: also the lock for that network)')
    .option('--port <n>', 'without REDIS_URL: the port the running server listens on (default: PORT from the config)')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { email?: string; ip?: string; port?: string }, cmd) => {
      const ui = commandUi(rt, cmd);
      if (!opts.email && !opts.ip)
        throw new UsageError('limits reset needs --email, --ip, or both', 'gatehouse limits reset --email user@example.com --ip 203.0.113.7');
      const { isIP } = await import('node:net');
      if (opts.ip !== undefined && !isIP(opts.ip)) throw new UsageError(`--ip: not an IP address: ${opts.ip}`);
      const config = loadCliConfig(rt, cmd);
      let cleared: string[];
      if (config.redisUrl) {
        const { resetLimits } = await import('../../services/limit-reset.js');
        cleared = await withApp(rt, config, cliLogger(config, ui), (app) => resetLimits(app, opts));
      } else {
        // The limits live in the memory of the running gatehouse serve: ask it (limits.routes.ts).
        const { resetOnRunningServer } = await import('./limits-remote.js');
        cleared = await resetOnRunningServer(config, opts);
      }
      ui.print('Cleared:');
      for (const c of cleared) ui.print(`  ${c}`);
      if (opts.email && !opts.ip) ui.print('(the failed-login lock is kept per network: add --ip with the address the user signs in from to clear it too)');
      ui.result({ success: true, cleared });
    });
};
