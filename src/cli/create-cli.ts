import { Command } from 'commander';
import { CLI_SCOPE, withAuditScope } from '../audit/audit-scope.js';
import { packageVersion } from '../version.js';
import { commands } from './commands/index.js';
import type { CliRuntime } from './context.js';
import { reportError } from './report-error.js';

/** The program with every command registered; errors are thrown (exitOverride), never exit. */
export function createCli(rt: CliRuntime): Command {
  const program = new Command('gatehouse')
    .description('Gatehouse: self-hosted authentication and user management')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--data-dir <dir>', 'data directory: config.json, SQLite file, outbox (env GATEHOUSE_DATA_DIR; default ./data)')
    .option('--environment-file <file>', "environment file applied over config.json, e.g. the service's /etc/gatehouse/gatehouse.env (init records it)")
    .option('--verbose', 'debug logs, and the stack trace of an error')
    .helpOption('-h, --help', 'show help for the command')
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      writeOut: (s) => rt.streams.stdout.write(s),
      writeErr: (s) => rt.streams.stderr.write(s),
    })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  program.helpCommand('help [command]', 'show help for a command');
  for (const register of commands) register(program, rt);
  return program;
}

/** Parses argv, runs the command and returns the exit code: 0 ok, 1 failure, 2 usage. */
export async function runCli(argv: string[], rt: CliRuntime): Promise<number> {
  const program = createCli(rt);
  try {
    // Every command acts as the operator at the host: the events it writes, however deep, have the
    // actor { via: 'cli' } (src/audit). `serve` leaves the scope for its server (commands/serve.ts).
    await withAuditScope(CLI_SCOPE, () => program.parseAsync(argv));
    return rt.exitCode;
  } catch (err) {
    return reportError(err, rt, { verbose: argv.includes('--verbose'), json: argv.includes('--json') });
  }
}
