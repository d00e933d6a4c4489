import type { Config } from '../config/schema.js';
import { canonicalEmail } from '../data/models/user-columns.js';
import type { UserRecord, UserRepository } from '../data/repositories/user-repository.js';
import type { Logger } from '../log/logger.js';
import { maskEmail } from '../mail/outbox.js';
import type { EmailTemplateName } from '../mail/render.js';
import { noticeResetUrl } from '../services/account-links.js';
import { isActiveUser, mailTime } from '../services/account-flow-deps.js';
import type { AccountNotifier } from '../services/account-notify.js';
import { deviceParts } from '../services/user-agent.js';
import type { AuditEvent } from './audit-types.js';
import type { NewDeviceDetector } from './new-device.js';

/**
 * The mail each security event sends to the user it is about. `passkeys.*` are a module's types:
 * listed by name, they mail when such a module records them and cost nothing otherwise.
 */
export const NOTICE_TEMPLATES: Readonly<Record<string, EmailTemplateName>> = {
  'sign_in.succeeded': 'new-device-sign-in',
  'password.changed': 'password-changed',
  'password.reset': 'password-was-reset',
  'email.changed': 'email-changed',
  'email.change_requested': 'email-change-requested',
  'two_factor.disabled': 'two-factor-disabled',
  'two_factor.reset': 'two-factor-reset',
  'social.linked': 'social-linked',
  'social.unlinked': 'social-unlinked',
  'passkeys.added': 'passkey-added',
  'passkeys.removed': 'passkey-removed',
};

const PROVIDER_NAMES: Record<string, string> = {
  google: 'Google',
  github: 'GitHub',
  facebook: 'Facebook',
  apple: 'Apple',
  discord: 'Discord',
  microsoft: 'Microsoft',
};

export interface SecurityNoticeDeps {
  config: Pick<Config, 'newDeviceEmails' | 'supportEmail' | 'appUrl' | 'publicBaseUrl' | 'resetUrlAllowlist' | 'webPages'>;
  users: Pick<UserRepository, 'findById'>;
  notify: Pick<AccountNotifier, 'email' | 'mayMessage'>;
  detector: NewDeviceDetector;
  /** Work after the answer (services/deferred-work.ts): no request waits for a lookup or for SMTP. */
  later(what: string, work: () => Promise<unknown>): void;
  logger: Logger;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 200) : undefined);

/** "Chrome, macOS": names only, the same in every language. */
function readableDevice(userAgent: string | null): string | undefined {
  const { browser, system } = deviceParts(userAgent);
  return [browser, system].filter(Boolean).join(', ') || undefined;
}

/**
 * What every notice shows: when (UTC), from where (address, browser and system) and what to do if it
 * was not them. Only what the event says and the user's name: never a token, code or link that acts.
 */
function noticeData(event: AuditEvent, user: UserRecord, config: SecurityNoticeDeps['config']): Record<string, string | undefined> {
  const actor = event.actor;
  // Someone else acted on the account (an admin, the CLI): the mail says so.
  const byAdmin = (actor && ('via' in actor || actor.id !== user.id)) || event.details.by === 'admin' ? '1' : undefined;
  const provider = text(event.details.provider);
  return {
    name: user.name ?? undefined,
    time: mailTime(new Date(event.at)),
    ip: event.ip ?? undefined,
    device: readableDevice(event.user_agent),
    resetUrl: noticeResetUrl(config),
    supportEmail: config.supportEmail,
    byAdmin,
    provider: provider ? (PROVIDER_NAMES[provider.toLowerCase()] ?? provider) : undefined,
    passkeyName: text(event.details.name) ?? text(event.details.label),
  };
}

/**
 * Mails the user about security events on their account, once the event is committed and the answer
 * has gone. Each address is counted against the account-mail budget (AccountNotifier.mayMessage, its
 * 'notices' pool), so nobody can flood an inbox by signing in again and again, nor use up the owner's
 * budget for reset links that way; a failure is logged, never thrown.
 */
export function createSecurityNotices(deps: SecurityNoticeDeps) {
  const log = deps.logger.child({ component: 'security-notices' });

  async function send(event: AuditEvent, template: EmailTemplateName): Promise<void> {
    if (!event.user_id) return;
    if (template === 'new-device-sign-in' && !(await deps.detector.judge(event)).length) return;
    const user = await deps.users.findById(event.user_id);
    // A disabled or deleted account gets no mail, whatever happened to it.
    if (!isActiveUser(user)) return;
    const data = noticeData(event, user, deps.config);
    // A requested change tells the current address where the account is asked to go (masked).
    const requested = template === 'email-change-requested' ? text(event.details.identifier) : undefined;
    const to = [{ address: user.email, data: requested ? { ...data, newEmail: maskEmail(requested) } : data }];
    // The address before the change: best as details.identifier (a column of its own, which erasure clears).
    const previous = template === 'email-changed' ? (text(event.details.identifier) ?? text(event.details.previous_email)) : undefined;
    if (previous && canonicalEmail(previous) !== canonicalEmail(user.email)) {
      // The old address is the one an attacker who took the account cannot read: it learns where the account went.
      to.push({ address: previous, data: { ...data, newEmail: maskEmail(user.email) } });
    }
    for (const { address, data: d } of to) {
      if (!(await deps.notify.mayMessage(address, 'notices'))) continue;
      await deps.notify.email({ to: address, template, lang: user.lang, data: d });
    }
    log.debug({ type: event.type, event_id: event.id }, 'security notice handled');
  }

  /** The after-commit reaction (the event table, src/app-events.ts): picks the events that mail, and hands the work to after the answer. */
  function handle(event: AuditEvent): void {
    const template = NOTICE_TEMPLATES[event.type];
    if (!template || event.outcome !== 'success' || !event.user_id) return;
    if (template === 'new-device-sign-in' && !deps.config.newDeviceEmails) return;
    deps.later(`security notice ${event.type}`, () => send(event, template));
  }

  return { handle };
}

export type SecurityNotices = ReturnType<typeof createSecurityNotices>;
