import { CommanderError } from 'commander';
import { ConfigError } from '../config/load-config.js';
import { isAppError } from '../errors/app-error.js';
import type { CliRuntime } from './context.js';
import { CliError } from './errors.js';

const isCommanderError = (e: unknown): e is CommanderError => e instanceof CommanderError || (e as { name?: string })?.name === 'CommanderError';

/**
 * Prints an error the way the CLI promises — one line plus a hint, the stack only with --verbose,
 * and with --json also a `{success:false}` document on stdout — and returns the exit code.
 */
export function reportError(err: unknown, rt: CliRuntime, opts: { verbose: boolean; json: boolean }): number {
  const { stderr, stdout } = rt.streams;
  if (isCommanderError(err)) {
    // Help and --version end this way too, with exit code 0.
    if (err.exitCode === 0) return 0;
    // commander has already printed its message (and the --help pointer) on stderr; scripts get the same on stdout.
    if (opts.json) {
      const error = err.message.replace(/^error:\s*/, '').replace(/\s*\n\s*/g, '; ');
      stdout.write(`${JSON.stringify({ success: false, error, code: 'USAGE', hint: 'run with --help for usage' }, null, 2)}\n`);
    }
    return 2;
  }

  let message: string;
  let hint: string | undefined;
  let code: string | undefined;
  let exitCode = 1;
  let details: string[] = [];
  if (err instanceof ConfigError) {
    stderr.write(`${err.message}\n`);
    if (opts.json) {
      const issues = err.issues.map((i) => ({ key: i.key, source: i.source, message: i.message }));
      stdout.write(`${JSON.stringify({ success: false, error: 'Invalid configuration', code: 'CONFIG_ERROR', issues }, null, 2)}\n`);
    }
    return 1;
  } else if (err instanceof CliError) {
    ({ message, hint, exitCode } = err);
  } else if (isAppError(err)) {
    message = err.message;
    code = String(err.code);
    if (Array.isArray(err.details) && err.details.length > 1) {
      details = err.details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message));
    }
  } else if ((err as Error)?.name === 'ExitPromptError') {
    message = 'cancelled';
  } else {
    message = (err as Error)?.message ?? String(err);
    if (!opts.verbose) hint = 'run again with --verbose for details';
  }
  message = message.replace(/\s*\n\s*/g, '; ');
  // Every usage error points somewhere, even one thrown without a hint of its own.
  if (exitCode === 2 && !hint) hint = 'run with --help for usage';

  stderr.write(`error: ${message}\n`);
  for (const d of details) stderr.write(`  - ${d}\n`);
  if (hint) stderr.write(`hint: ${hint}\n`);
  if (opts.verbose && err instanceof Error && err.stack) stderr.write(`${err.stack}\n`);
  if (opts.json) stdout.write(`${JSON.stringify({ success: false, error: message, code: code ?? (exitCode === 2 ? 'USAGE' : 'ERROR'), hint }, null, 2)}\n`);
  return exitCode;
}
