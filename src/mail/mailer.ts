import { rm } from 'node:fs/promises';
import nodemailer, { type Transporter } from 'nodemailer';
import SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Config } from '../config/schema.js';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../log/logger.js';
import { maskEmail, outboxDir, outboxStem, writeOutboxFile } from './outbox.js';
import { renderEmail, type EmailBranding, type EmailTemplateName, type TemplateSource } from './render.js';

export const MAIL_DELIVERY_FAILED = 'MAIL_DELIVERY_FAILED';

export interface MailMessage {
  to: string;
  /** A core template, or one of `source`'s (a module's own messages). */
  template: EmailTemplateName | (string & {});
  source?: TemplateSource;
  /** The user's language; falls back to English. */
  lang?: string | null;
  data: Record<string, string | number | undefined>;
}

export interface Mailer {
  /** Renders and delivers one message. SMTP failures throw AppError 503 MAIL_DELIVERY_FAILED. */
  send(msg: MailMessage): Promise<{ messageId: string; transport: 'smtp' | 'outbox' }>;
  /** Throws AppError 503 MAIL_DELIVERY_FAILED when the SMTP server (or the outbox dir) is unusable. */
  verify(): Promise<void>;
  close(): Promise<void>;
}

// Fail in seconds rather than nodemailer's defaults (minutes), since a request waits on the send.
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

interface Composed {
  from: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
}

/** SMTP when SMTP_URL is set, otherwise .eml files in <data dir>/outbox. */
export function createMailer(config: Config, logger: Logger): Mailer {
  const log = logger.child({ component: 'mail' });
  const branding: EmailBranding = {
    productName: config.productName,
    brandColor: config.brandColor,
    publicUrl: config.publicBaseUrl,
    appUrl: config.appUrl ?? config.publicBaseUrl,
  };
  const compose = (msg: MailMessage): Composed => {
    const { subject, html, text } = renderEmail(msg.template, msg.lang, msg.data, branding, msg.source);
    // Auto-Submitted keeps vacation responders from answering a no-reply address.
    return { from: config.mailFrom, to: msg.to, subject, html, text, headers: { 'Auto-Submitted': 'auto-generated' } };
  };
  return config.smtpUrl ? smtpMailer(config.smtpUrl, compose, log) : outboxMailer(config.dataDirAbs, compose, log);
}

/** host:port only — the URL itself may hold credentials. */
function describeSmtp(smtpUrl: string): string {
  const u = new URL(smtpUrl);
  return `${u.hostname}:${u.port || (u.protocol === 'smtps:' ? 465 : 587)}`;
}

function smtpMailer(smtpUrl: string, compose: (m: MailMessage) => Composed, log: Logger): Mailer {
  const target = describeSmtp(smtpUrl);
  // The transport class directly: createTransport() drops every other option when given a URL.
  const transporter: Transporter<SMTPTransport.SentMessageInfo> = nodemailer.createTransport(new SMTPTransport({ url: smtpUrl, ...SMTP_TIMEOUTS }));
  return {
    async send(msg) {
      const mail = compose(msg);
      try {
        const info = await transporter.sendMail(mail);
        log.info({ transport: 'smtp', template: msg.template, to: maskEmail(msg.to), messageId: info.messageId }, 'mail sent');
        return { messageId: info.messageId, transport: 'smtp' };
      } catch (err) {
        const e = err as Error & { code?: string; responseCode?: number };
        log.warn(
          { transport: 'smtp', template: msg.template, to: maskEmail(msg.to), smtp: target, errCode: e.code, responseCode: e.responseCode, reason: e.message },
          'mail delivery failed',
        );
        throw new AppError(503, MAIL_DELIVERY_FAILED, 'Email could not be sent; try again later');
      }
    },
    async verify() {
      try {
        await transporter.verify();
      } catch (err) {
        throw new AppError(503, MAIL_DELIVERY_FAILED, `Cannot use the SMTP server at ${target}: ${(err as Error).message}`);
      }
    },
    async close() {
      transporter.close();
    },
  };
}

function outboxMailer(dataDirAbs: string, compose: (m: MailMessage) => Composed, log: Logger): Mailer {
  const dir = outboxDir(dataDirAbs);
  // nodemailer still builds the MIME message, so an outbox .eml is exactly what SMTP would carry.
  const builder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(msg) {
      const mail = compose(msg);
      const info = await builder.sendMail(mail);
      const file = await writeOutboxFile(dir, `${outboxStem()}-${msg.template}.eml`, info.message as Buffer);
      // The kind of message and where it is, nothing more: links and bodies carry live tokens and
      // codes, and whoever reads the journal must not be able to take over the account.
      log.info({ transport: 'outbox', template: msg.template, to: maskEmail(msg.to), file }, 'mail written to outbox');
      return { messageId: info.messageId, transport: 'outbox' };
    },
    async verify() {
      try {
        await rm(await writeOutboxFile(dir, `.verify-${outboxStem()}`, ''));
      } catch (err) {
        throw new AppError(503, MAIL_DELIVERY_FAILED, `Cannot write to the mail outbox ${dir}: ${(err as Error).message}`);
      }
    },
    async close() {
      builder.close();
    },
  };
}
