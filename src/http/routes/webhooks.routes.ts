import { defineRoute } from '../define-route.js';
import { webhookCreateBody, webhookDeliveriesQuery, webhookIdParams, webhookRetryParams } from '../schemas/webhooks.schemas.js';

/**
 * Webhook endpoints (src/webhooks, docs/webhooks.md): superadmins only, as the CLI's `gatehouse
 * webhook`. A signing secret is in the answer of create and rotate-secret, and never again.
 */
const SUPERADMIN = { roles: ['superadmin'] } as const;

export const listWebhooks = defineRoute({
  method: 'get',
  path: '/auth/admin/webhooks',
  summary: 'List webhook endpoints (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  async handler({ app }) {
    return { success: true, data: { webhooks: await app.services.webhooks.list() } };
  },
});

export const createWebhook = defineRoute({
  method: 'post',
  path: '/auth/admin/webhooks',
  summary: 'Add a webhook endpoint (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  body: webhookCreateBody,
  async handler({ body, app }) {
    const { endpoint, secret } = await app.services.webhooks.create(body);
    return { success: true, message: 'Webhook endpoint registered; the secret is shown once', data: { webhook: endpoint, secret } };
  },
});

export const deleteWebhook = defineRoute({
  method: 'delete',
  path: '/auth/admin/webhooks/:id',
  summary: 'Remove a webhook endpoint (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: webhookIdParams,
  async handler({ params, app }) {
    await app.services.webhooks.remove(params.id);
    return { success: true, message: 'Webhook endpoint removed' };
  },
});

export const rotateWebhookSecret = defineRoute({
  method: 'post',
  path: '/auth/admin/webhooks/:id/rotate-secret',
  summary: "Rotate a webhook endpoint's signing secret (admin)",
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: webhookIdParams,
  async handler({ params, app }) {
    const { endpoint, secret } = await app.services.webhooks.rotateSecret(params.id);
    return { success: true, message: 'Secret rotated; the previous one signs too for 24 hours', data: { webhook: endpoint, secret } };
  },
});

export const testWebhook = defineRoute({
  method: 'post',
  path: '/auth/admin/webhooks/:id/test',
  summary: 'Send a test event to a webhook endpoint (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: webhookIdParams,
  async handler({ params, app }) {
    return { success: true, data: await app.services.webhooks.test(params.id) };
  },
});

export const webhookDeliveries = defineRoute({
  method: 'get',
  path: '/auth/admin/webhooks/:id/deliveries',
  summary: "List a webhook endpoint's deliveries (admin)",
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: webhookIdParams,
  query: webhookDeliveriesQuery,
  async handler({ params, query, app }) {
    return { success: true, data: { deliveries: await app.services.webhooks.deliveries(params.id, query.limit) } };
  },
});

export const retryWebhook = defineRoute({
  method: 'post',
  path: '/auth/admin/webhooks/deliveries/:id/retry',
  summary: 'Retry a failed webhook delivery (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: webhookRetryParams,
  async handler({ params, app }) {
    return { success: true, message: 'Queued again with the same webhook-id', data: { message: await app.services.webhooks.retry(params.id) } };
  },
});
