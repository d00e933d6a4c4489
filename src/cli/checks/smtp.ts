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
  const mailer = createMailer(config, logger);
  try {
    await mailer.verify();
    if (!config.smtpUrl) {
      return { status: 'warn', detail: `outbox in use: SMTP_URL is not set, mail is written to ${outboxDir(config.dataDirAbs)}` };
    }
    const u = new URL(config.smtpUrl);
    return { status: 'ok', detail: `SMTP server ${u.hostname}:${u.port || (u.protocol === 'smtps:' ? 465 : 587)} accepted the connection` };
  } catch (err) {
    return { status: 'fail', detail: (err as Error).message };
  } finally {
    await mailer.close().catch(() => undefined);
  }
}
