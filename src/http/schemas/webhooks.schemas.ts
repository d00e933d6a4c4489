import { z } from 'zod';
import { ENDPOINT_ID_RE, RETRY_ID_RE, webhookCreateInput } from '../../webhooks/webhook-input.js';

/** The admin webhooks API's request schemas; the create body is the service's own input schema. */
export const webhookCreateBody = webhookCreateInput;
export const webhookIdParams = z.object({ id: z.string().regex(ENDPOINT_ID_RE, 'not a webhook endpoint id (whe_…)') });
export const webhookRetryParams = z.object({ id: z.string().regex(RETRY_ID_RE, 'not a message or delivery id (msg_… or dlv_…)') });
export const webhookDeliveriesQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) });
