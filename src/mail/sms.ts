import type { Config } from '../config/schema.js';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../log/logger.js';
import { maskPhone, outboxDir, outboxStem, writeOutboxFile } from './outbox.js';

export const SMS_DELIVERY_FAILED = 'SMS_DELIVERY_FAILED';

export interface SmsSender {
  /** Sends one text. Provider failures throw AppError 503 SMS_DELIVERY_FAILED. */
  send(to: string, body: string): Promise<{ id: string; transport: 'twilio' | 'outbox' }>;
}

const SMS_TIMEOUT_MS = 10_000;

const deliveryFailed = (message = 'SMS could not be sent; try again later') => new AppError(503, SMS_DELIVERY_FAILED, message);

/** The Twilio-compatible provider when SMS_PROVIDER=twilio, otherwise text files in <data dir>/outbox. */
export function createSmsSender(config: Config, logger: Logger): SmsSender {
  const log = logger.child({ component: 'sms' });
  if (config.smsProvider !== 'twilio') return outboxSmsSender(outboxDir(config.dataDirAbs), log);
  const { smsAccountSid: sid, smsAuthToken: token, smsFrom: from } = config;
  if (!sid || !token || !from) {
    // Not fatal at startup: only SMS features fail, with an answer that says why.
    const missing = 'SMS_PROVIDER is twilio but SMS_ACCOUNT_SID, SMS_AUTH_TOKEN and SMS_FROM are not all set';
    log.warn(missing);
    return { send: async () => Promise.reject(deliveryFailed(`SMS is not configured (${missing})`)) };
  }
  return twilioSender({ apiUrl: config.smsApiUrl, sid, token, from }, log);
}

interface TwilioSettings {
  apiUrl: string;
  sid: string;
  token: string;
  from: string;
}

interface TwilioReply {
  sid?: string;
  code?: number;
  message?: string;
}

function twilioSender(s: TwilioSettings, log: Logger): SmsSender {
  const endpoint = `${s.apiUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(s.sid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${s.sid}:${s.token}`).toString('base64')}`;
  return {
    async send(to, body) {
      let res: Response;
      let reply: TwilioReply | null;
      try {
        res = await fetch(endpoint, {
          method: 'POST',
          headers: { authorization, accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ To: to, From: s.from, Body: body }),
          signal: AbortSignal.timeout(SMS_TIMEOUT_MS),
        });
        reply = (await res.json().catch(() => null)) as TwilioReply | null;
      } catch (err) {
        log.warn({ transport: 'twilio', to: maskPhone(to), reason: (err as Error).message }, 'sms provider unreachable');
        throw deliveryFailed();
      }
      if (!res.ok || !reply?.sid) {
        // `code` is a redacted log path, hence providerCode.
        log.warn({ transport: 'twilio', to: maskPhone(to), status: res.status, providerCode: reply?.code, reason: reply?.message }, 'sms delivery failed');
        throw deliveryFailed();
      }
      log.info({ transport: 'twilio', to: maskPhone(to), id: reply.sid }, 'sms sent');
      return { id: reply.sid, transport: 'twilio' };
    },
  };
}

function outboxSmsSender(dir: string, log: Logger): SmsSender {
  return {
    async send(to, body) {
      const stem = outboxStem();
      const file = await writeOutboxFile(dir, `sms-${stem}.txt`, `To: ${to}\nDate: ${new Date().toISOString()}\n\n${body}\n`);
      log.info({ transport: 'outbox', to: maskPhone(to), file }, 'sms written to outbox');
      return { id: `outbox-${stem}`, transport: 'outbox' };
    },
  };
}
