import { z } from 'zod';

/** What registering an endpoint takes, from the CLI and the admin API alike (one parse each). */
export const webhookCreateInput = z
  .object({
    url: z.string().trim().min(1, 'is required').max(2048, 'is longer than 2048 characters'),
    events: z
      .array(z.string().trim().min(1).max(100))
      .min(1, 'name at least one event type (e.g. user.created, user.*, or *)')
      .max(100, 'at most 100 event types'),
    description: z.string().trim().max(500, 'at most 500 characters').optional(),
    include_ip_user_agent: z.boolean().optional(),
  })
  .strict();

export type WebhookCreateInput = z.output<typeof webhookCreateInput>;

/** Ids the operator passes: endpoints `whe_…`, messages `msg_…`, deliveries `dlv_…`. */
export const ENDPOINT_ID_RE = /^whe_[0-9a-f-]{36}$/;
export const RETRY_ID_RE = /^(msg|dlv)_[0-9a-f-]{36}$/;
