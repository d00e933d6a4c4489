import type { AuditService } from './audit/audit-service.js';
import type { AuditEvent } from './audit/audit-types.js';
import { NOTICE_TEMPLATES, type SecurityNotices } from './audit/security-notices.js';
import type { Config } from './config/schema.js';
import type { Transaction } from './data/unit-of-work.js';
import type { Logger } from './log/logger.js';
import type { ModuleRuntime } from './modules/runtime.js';
import type { SessionService, SessionsRevoked } from './services/session-service.js';
import type { WebhookService } from './webhooks/webhook-service.js';

/**
 * When a reaction runs: inside the unit of work that wrote the event (it commits or rolls back with the
 * change, and a failure fails the change), or once that unit of work committed (never for a rollback;
 * a failure is logged, never the change's error).
 */
export type EventPhase = 'in-transaction' | 'after-commit';

/** A reaction to security events the audit record writes (src/audit): `on` names their types, `'*'` every one. */
export interface AuditReaction {
  source: 'audit';
  on: readonly string[] | '*';
  phase: EventPhase;
  /** Who reacts and how, for the reader and the log. */
  reaction: string;
  run(event: AuditEvent, tx: Transaction | null): Promise<void> | void;
}

/**
 * A reaction to Gatehouse sessions ending (the session service's revocations, src/services/session-service.ts):
 * `sessions.revoked` (revoked: a password change, an admin, a user's "sign out everywhere") or
 * `sessions.signed_out` (a sign-out: what the session authorized stays). Always in the ending's unit of work.
 */
export interface SessionReaction {
  source: 'sessions';
  on: 'sessions.revoked' | 'sessions.signed_out';
  phase: 'in-transaction';
  reaction: string;
  run(ended: SessionsRevoked, tx: Transaction | null): Promise<void>;
}

export type EventTableRow = AuditReaction | SessionReaction;

/**
 * Audit events of a change to a user's account that end every grant of theirs at the OpenID provider
 * (refresh tokens included), as a revocation of all their sessions does.
 */
export const GRANT_ENDING_EVENTS: readonly string[] = [
  'user.disabled',
  'user.deleted',
  'password.changed',
  'password.reset',
  'user.role_changed',
  'email.changed',
];

/** What the table asks of the OpenID provider (src/oidc/oidc.ts): the table is built with it, never imports it. */
export interface OidcReactions {
  revokeAccount(userId: string, tx?: Transaction | null): Promise<void>;
  sessionsRevoked(ended: Pick<SessionsRevoked, 'ids' | 'everyOf'>, tx?: Transaction | null): Promise<void>;
  sessionsSignedOut(ids: string[], tx?: Transaction | null): Promise<void>;
}

/** What the table's rows react with: built by the services stage (src/app-services.ts) and the module runtime. */
export interface EventTableParts {
  config: Pick<Config, 'oidcEnabled'>;
  notices: Pick<SecurityNotices, 'handle'>;
  webhooks: Pick<WebhookService, 'enqueueFor' | 'wakeFor'>;
  oidc: OidcReactions;
  modules: Pick<ModuleRuntime, 'registry' | 'isEnabled' | 'context'>;
  logger: Logger;
}

/**
 * The event table: every reaction to an event in core, in one place, in the order they run. Which
 * event, which reaction, in the change's transaction or after its commit. Nothing else subscribes to
 * the audit record or to session revocations (`wireEvents` is the only caller of `onRecord`,
 * `afterRecord` and `onRevoked` outside tests).
 */
export function eventTable(p: EventTableParts): EventTableRow[] {
  const rows: EventTableRow[] = [
    {
      source: 'audit',
      on: '*',
      phase: 'in-transaction',
      reaction: 'webhooks: a message in the outbox per enabled endpoint subscribed to the type (src/webhooks)',
      run: (event, tx) => (tx ? p.webhooks.enqueueFor(event, tx) : undefined),
    },
    {
      source: 'audit',
      on: GRANT_ENDING_EVENTS,
      phase: 'in-transaction',
      reaction: 'OpenID provider: every grant and token of the user ends, their clients get a back-channel logout (src/oidc)',
      run: async (event, tx) => {
        if (event.user_id) await p.oidc.revokeAccount(event.user_id, tx);
      },
    },
    {
      source: 'sessions',
      on: 'sessions.revoked',
      phase: 'in-transaction',
      reaction: 'OpenID provider: what was issued in the revoked sessions ends (all of a user whose every session ended)',
      run: (ended, tx) => p.oidc.sessionsRevoked(ended, tx),
    },
    {
      source: 'audit',
      on: '*',
      phase: 'after-commit',
      reaction: 'webhooks: the delivery worker is woken when the event put a message in the outbox',
      run: (event) => p.webhooks.wakeFor(event),
    },
    {
      source: 'audit',
      on: Object.keys(NOTICE_TEMPLATES),
      phase: 'after-commit',
      reaction:
        'security notices: a mail to the user (new device, password, email, two-factor, social, passkeys), after the answer (src/audit/security-notices.ts)',
      run: (event) => p.notices.handle(event),
    },
    {
      source: 'audit',
      on: '*',
      phase: 'after-commit',
      reaction: "modules: each installed, switched-on module's `events` reactions to the type (its manifest)",
      run: (event) => moduleReactions(p, event),
    },
  ];
  // A sign-out tells the OpenID clients with a back-channel logout URI; with the provider off there are none to tell,
  // and a sign-out costs no look-up of the provider's sessions.
  if (p.config.oidcEnabled)
    rows.splice(3, 0, {
      source: 'sessions',
      on: 'sessions.signed_out',
      phase: 'in-transaction',
      reaction: 'OpenID provider: the clients the signed-out sessions signed in to get a back-channel logout token (src/oidc/backchannel.ts)',
      run: (ended, tx) => p.oidc.sessionsSignedOut(ended.ids, tx),
    });
  return rows;
}

/** Runs the module reactions to one committed event, each on its own: one failing is logged, the others run. */
async function moduleReactions(p: EventTableParts, event: AuditEvent): Promise<void> {
  for (const m of p.modules.registry()) {
    if (!m.events?.length || !p.modules.isEnabled(m.id)) continue;
    for (const r of m.events) {
      if (!r.on.includes(event.type)) continue;
      try {
        await r.handler(event, p.modules.context(m.id));
      } catch (err) {
        p.logger.error({ module: m.id, type: event.type, event_id: event.id, reason: (err as Error)?.message }, 'module event reaction failed');
      }
    }
  }
}

const answers = (on: readonly string[] | '*', type: string) => on === '*' || on.includes(type);

/**
 * Subscribes the table's rows to their sources, in the table's order. After-commit rows run each on
 * its own (one failing is logged and the next still runs).
 */
export function wireEvents(
  rows: readonly EventTableRow[],
  to: { audit: Pick<AuditService, 'onRecord' | 'afterRecord'>; sessions: Pick<SessionService, 'onRevoked'>; logger: Logger },
): void {
  for (const row of rows) {
    if (row.source === 'sessions') {
      const signedOut = row.on === 'sessions.signed_out';
      to.sessions.onRevoked(async (ended, tx) => {
        if (Boolean(ended.signOut) === signedOut) await row.run(ended, tx ?? null);
      });
    } else if (row.phase === 'in-transaction') {
      to.audit.onRecord(async (event, tx) => {
        if (answers(row.on, event.type)) await row.run(event, tx);
      });
    } else {
      to.audit.afterRecord(async (event) => {
        if (!answers(row.on, event.type)) return;
        try {
          await row.run(event, null);
        } catch (err) {
          to.logger.error({ type: event.type, reaction: row.reaction, reason: (err as Error)?.message }, 'event reaction failed');
        }
      });
    }
  }
}
