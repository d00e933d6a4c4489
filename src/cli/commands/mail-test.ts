import type { Command } from 'commander';
import type { AppContext } from '../../app-context.js';
import { badRequest } from '../../errors/app-error.js';

const ADDRESS_RE = /^[^\s@<>]+@[^\s@<>]+$/;

/**
 * `gatehouse mail test --to ADDRESS`: sends the "test" message through the configured transport
 * (SMTP, or the outbox when SMTP_URL is unset). Throws AppError 400 for a bad address and 503
 * MAIL_DELIVERY_FAILED when the SMTP server refuses.
 */
export async function runMailTest(app: AppContext, to: string): Promise<{ messageId: string; transport: string }> {
  const address = String(to ?? '').trim();
  if (!ADDRESS_RE.test(address)) throw badRequest('--to must be an email address', [{ field: 'to', message: 'must be an email address' }]);
  const sent = await app.services.mailer.send({ to: address, template: 'test', lang: null, data: {} });
  return { messageId: sent.messageId, transport: sent.transport };
}

export interface MailCommandDeps {
  /** Opens the app context from the global options, runs `fn`, and closes the context. */
  withApp<T>(fn: (app: AppContext) => Promise<T>): Promise<T>;
  /** Prints a result: `json` with --json, else the human line. */
  print(human: string, json: unknown, opts: { json?: boolean }): void;
}

/** Adds `mail test --to ADDRESS [--json]` to the program. */
export function registerMailCommands(program: Command, deps: MailCommandDeps): Command {
  const mail = program.command('mail').description('Outgoing mail');
  mail
    .command('test')
    .description('Send a test message to check the mail settings')
    .requiredOption('--to <address>', 'recipient address')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { to: string; json?: boolean }) => {
      const r = await deps.withApp((app) => runMailTest(app, opts.to));
      const where = r.transport === 'outbox' ? 'written to the outbox (SMTP_URL is not set)' : 'accepted by the SMTP server';
      deps.print(`Test message to ${opts.to} ${where}; message id ${r.messageId}`, { success: true, to: opts.to, ...r }, opts);
    });
  return mail;
}
