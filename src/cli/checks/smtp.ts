import { accessSync, constants, existsSync } from 'node:fs';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { createMailer } from '../../mail/mailer.js';
import { outboxDir } from '../../mail/outbox.js';

export interface SmtpCheckResult {
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}

/** Doctor check: connects and authenticates to SMTP_URL (nothing is sent); warns when the outbox is in use. */
export async function checkSmtp(config: Config, logger: Logger): Promise<SmtpCheckResult> {
  if (!config.smtpUrl) return checkOutbox(config.dataDirAbs);
  const mailer = createMailer(config, logger);
  try {
    await mailer.verify();
    const u = new URL(config.smtpUrl);
    return { status: 'ok', detail: `SMTP server ${u.hostname}:${u.port || (u.protocol === 'smtps:' ? 465 : 587)} accepted the connection` };
  } catch (err) {
    return { status: 'fail', detail: (err as Error).message };
  } finally {
    await mailer.close().catch(() => undefined);
  }
}

/**
 * The outbox is made on first use. The doctor only looks whether it could be (the outbox, else the
 * data dir it goes in, writable): a check run on a wrong data dir must not leave an outbox there.
 */
function checkOutbox(dataDirAbs: string): SmtpCheckResult {
  const dir = outboxDir(dataDirAbs);
  const unset = 'outbox in use: SMTP_URL is not set';
  const where = existsSync(dir) ? dir : dataDirAbs;
  // The data-dir check already fails (with the command that creates it); no second failure here.
  if (!existsSync(where)) return { status: 'warn', detail: `${unset}; mail would be written to ${dir}, but the data dir does not exist` };
  try {
    accessSync(where, constants.W_OK);
  } catch (err) {
    return { status: 'fail', detail: `cannot write to the mail outbox ${dir} (${(err as NodeJS.ErrnoException).code})` };
  }
  return { status: 'warn', detail: `${unset}, mail is written to ${dir}` };
}
