/** Signed webhooks' shapes (src/webhooks): what is stored, what the CLI and the API answer. */

export type MessageStatus = 'pending' | 'delivered' | 'failed';

/** An endpoint as the operator sees it: never its secret (shown once, at creation and rotation). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  /** Event types: exact (`user.created`), a family (`user.*`) or everything (`*`). */
  events: string[];
  include_ip_user_agent: boolean;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
  failing_since: string | null;
  /** Until when the previous secret still signs (a rotation's overlap), or null. */
  previous_secret_expires_at: string | null;
}

/** The stored row, with the sealed secrets. */
export interface EndpointRow extends WebhookEndpoint {
  /** `webhook` (the operator's), or a delivery core makes for itself (`oidc_backchannel_logout`: unsigned, its body built when sent). */
  kind: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
}

/** One outbox message: the body is fixed at enqueue time, so every retry sends the same bytes. */
export interface WebhookMessage {
  id: string;
  endpoint_id: string;
  event_id: string | null;
  type: string;
  payload: string;
  status: MessageStatus;
  attempts: number;
  next_attempt_at: string;
  created_at: string;
}

/** One attempt in the delivery log. */
export interface WebhookDelivery {
  id: string;
  message_id: string;
  type: string;
  attempt: number;
  at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  /** At most 1 kB of what the receiver answered. */
  response_body: string | null;
  message_status: MessageStatus;
}

/** What sending one attempt came to. */
export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  /** The attempt was cut short by the worker's stop: no outcome is recorded, the lease lapses and it is retried. */
  aborted?: boolean;
}
