/** The security-event record's shapes (src/audit): what is stored, what the API answers. */

export type AuditOutcome = 'success' | 'failure';

/**
 * Who did it: the signed-in person (for a sign-in, the user signing in), `{ via: 'cli' }` for the
 * CLI, `{ via: 'oidc_client', client_id }` for an OpenID client at the provider's endpoints (a token
 * request, a refresh, a failed client authentication), null for anonymous requests and the system (jobs).
 */
export type AuditActor = { id: string; user_type: string } | { via: 'cli' } | { via: 'oidc_client'; client_id: string } | null;

/** One event as the admin query, the CLI and webhooks give it. */
export interface AuditEvent {
  id: string;
  type: string;
  /** ISO 8601. */
  at: string;
  outcome: AuditOutcome;
  actor: AuditActor;
  /** Whom it is about, or null (a sign-in to an unknown account). */
  user_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  /** Never a password, code, token, secret or session id (the service drops such keys). */
  details: Record<string, unknown>;
}

/** What a writer says; where, who (by default) and when come from the request's scope (audit-scope.ts). */
export interface AuditInput {
  type: string;
  /** Default 'success'. */
  outcome?: AuditOutcome;
  /** Whom it is about. */
  userId?: string | null;
  /** Overrides the scope's actor (a sign-in: the user signing in). */
  actor?: AuditActor;
  details?: Record<string, unknown>;
}

/** Filters of the admin query (GET /auth/admin/audit-events, `gatehouse audit list`). */
export interface AuditFilters {
  userId?: string;
  actorId?: string;
  /** Exact types, or families written `sign_in.*`. */
  types?: string[];
  outcome?: AuditOutcome;
  ip?: string;
  since?: Date;
  until?: Date;
  /** 1..200 (the service clamps). */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

export interface AuditPage {
  events: AuditEvent[];
  next_cursor: string | null;
}
