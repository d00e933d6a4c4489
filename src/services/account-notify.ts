import type { Config } from '../config/schema.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { Logger } from '../log/logger.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { maskEmail, maskPhone } from '../mail/outbox.js';
import type { SmsSender } from '../mail/sms.js';
import { sha256 } from './security/tokens.js';

export interface AccountNotifier {
  /**
   * Sends one account mail. A failure is logged and reported as false, never thrown: an SMTP outage
   * must not answer differently for existing accounts than for unknown ones.
   */
  email(msg: MailMessage): Promise<boolean>;
  /** Same contract for a text message. */
  sms(to: string, body: string): Promise<boolean>;
  /**
   * Counts one message to this address against the token-login limit; false when the address got too
   * many lately. Per address (not per IP), so a botnet cannot flood one inbox or phone. `pool`
   * 'notices' (security notices) counts apart from links and codes, at the same budget: notices an
   * attacker can cause never use up the budget the owner needs for a reset link, nor the reverse.
   */
  mayMessage(address: string, pool?: 'links' | 'notices'): Promise<boolean>;
}

export interface AccountNotifierDeps {
  mailer: Mailer;
  sms: SmsSender;
  limiter: RateLimiter;
  config: Pick<Config, 'rateLimitsEnabled' | 'rateLimitTokenLogin'>;
  logger: Logger;
}

export function createAccountNotifier(deps: AccountNotifierDeps): AccountNotifier {
  const log = deps.logger.child({ component: 'account-mail' });
  return {
    async email(msg) {
      try {
        await deps.mailer.send(msg);
        return true;
      } catch (err) {
        log.error({ template: msg.template, to: maskEmail(msg.to), reason: (err as Error).message }, 'account mail not sent');
        return false;
      }
    },
    async sms(to, body) {
      try {
        await deps.sms.send(to, body);
        return true;
      } catch (err) {
        log.error({ to: maskPhone(to), reason: (err as Error).message }, 'account sms not sent');
        return false;
      }
    },
    async mayMessage(address, pool = 'links') {
      if (!deps.config.rateLimitsEnabled) return true;
      // Hashed: limiter keys may live in Redis, and addresses are personal data.
      const bucket = pool === 'links' ? 'message-to' : 'notice-to';
      const r = await deps.limiter.consume(bucket, sha256(address.toLowerCase()), deps.config.rateLimitTokenLogin);
      if (!r.allowed) log.warn({ to: address.includes('@') ? maskEmail(address) : maskPhone(address), pool }, 'account message throttled for this address');
      return r.allowed;
    },
  };
}
