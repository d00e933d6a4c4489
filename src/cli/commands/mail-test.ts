import type { Command } from 'commander';
import type { AppContext } from '../../app-context.js';
import { invalidInput } from '../../errors/zod-issues.js';
import { emailField } from '../../services/user-fields.js';
import { UsageError } from '../errors.js';

/** `to` under the one email rule (user-fields.ts): trimmed and lower-cased; 400 VALIDATION_ERROR naming `to` when it is no address. */
function mailTestAddress(to: string) {
  const parsed = emailField.safeParse(String(to ?? ''));
  if (!parsed.success) throw invalidInput(parsed.error, 'to');
  return parsed.data;
}

/**
 * `gatehouse mail test --to ADDRESS`: sends the "test" message through the configured transport
 * (SMTP, or the outbox when SMTP_URL is unset) to the address `mailTestAddress` accepts (AppError 400
 * otherwise; the command refuses it as a usage error first). 503 MAIL_DELIVERY_FAILED when the SMTP server refuses.
 */
export async function runMailTest(app: AppContext, to: string): Promise<{ messageId: string; transport: string; to: string }> {
  const address = mailTestAddress(to);
  const sent = await app.services.mailer.send({ to: address, template: 'test', lang: null, data: {} });
  return { messageId: sent.messageId, transport: sent.transport, to: address };
}

export interface MailCommandDeps {
  /** Opens the app context from the global options, runs `fn`, and closes the context. */
  withApp<T>(fn: (app: AppContext) => Promise<T>): Promise<T>;
  /** Prints a result: `json` with --json, else the human line. */
  print(human: string, json: unknown, opts: { json?: boolean }): void;
}

/** Adds `mail test --to ADDRESS [--json]` to the program. */
export function registerMailCommands(program: Command, deps: MailCommandDeps): Command {
  const mail = program.command('mail').description('Outgoing mail: mail test, mail outbox');
  mail
    .command('test')
    .description('Send a test message to check the mail settings')
    .requiredOption('--to <address>', 'recipient address')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { to: string; json?: boolean }) => {
      // A bad address is bad usage (exit code 2), found before the data dir is opened.
      const to = emailField.safeParse(opts.to);
      if (!to.success) throw new UsageError(invalidInput(to.error, '--to').message, 'pass --to with an address such as ops@example.com');
      const r = await deps.withApp((app) => runMailTest(app, to.data));
      const where = r.transport === 'outbox' ? 'written to the outbox (SMTP_URL is not set)' : 'accepted by the SMTP server';
      deps.print(`Test message to ${r.to} ${where}; message id ${r.messageId}`, { success: true, ...r }, opts);
    });
  return mail;
}
