import type { Command } from 'commander';
import type { AppContext } from '../app-context.js';
import { isAppError } from '../errors/app-error.js';
import type { CliRuntime } from './context.js';
import { cliLogger, commandUi, loadCliConfig, requireSchema, withApp } from './context.js';
import { CliError, UsageError } from './errors.js';
import type { Ui } from './ui.js';

/**
 * Runs a command that drives one of the admin API's services on the app, as the CLI actor: the
 * service's 400 is a usage error (exit 2, pointing at `help`; with `details`, the field messages its
 * message does not already carry are appended, each once), any other refusal a failure (exit 1; a 404 points at `listHint`).
 */
export async function runServiceCommand<T>(
  rt: CliRuntime,
  cmd: Command,
  fn: (app: AppContext, ui: Ui) => Promise<T>,
  opts: { help: string; listHint: string; details?: boolean },
): Promise<{ ui: Ui; value: T }> {
  const ui = commandUi(rt, cmd);
  const config = loadCliConfig(rt, cmd);
  try {
    const value = await withApp(rt, config, cliLogger(config, ui), async (app) => {
      await requireSchema(app);
      return fn(app, ui);
    });
    return { ui, value };
  } catch (err) {
    if (isAppError(err) && err.status === 400) {
      // The message already names the first bad field ("field: message", zod-issues.ts): only the others are added.
      const details = opts.details ? (err.details ?? []).map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).filter((d) => d !== err.message) : [];
      throw new UsageError(details.length ? `${err.message}; ${details.join('; ')}` : err.message, opts.help);
    }
    if (isAppError(err)) throw new CliError(err.message, err.status === 404 ? opts.listHint : undefined);
    throw err;
  }
}
