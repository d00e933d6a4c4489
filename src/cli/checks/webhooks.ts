import { ok, warn, type Check } from './check.js';

/** A backlog this old means no worker is delivering (serve not running, or the receivers down for long). */
const STALE_SECONDS = 3600;

/**
 * Webhook endpoints the worker switched off (every delivery failed for 5 days) and an outbox no one
 * drains: the operator hears of them here as well as in the log.
 */
export const webhooksCheck: Check = {
  id: 'webhooks',
  title: 'Webhook endpoints and outbox',
  category: 'storage',
  needs: ['database', 'migrations'],
  async run(ctx) {
    const app = await ctx.app();
    const disabled = await app.services.webhooks.disabledEndpoints();
    const { pending, oldest } = await app.services.webhooks.pendingStats();
    if (disabled.length) {
      const list = disabled.map((e) => `${e.id} ${e.url}: ${e.disabled_reason ?? 'disabled'}`).join('; ');
      return warn(
        `${disabled.length} webhook endpoint${disabled.length === 1 ? ' is' : 's are'} disabled: ${list}`,
        'fix the receiver, check it with gatehouse webhook test ID, then gatehouse webhook enable ID (or remove it: gatehouse webhook remove ID)',
      );
    }
    const age = oldest ? Math.round((Date.now() - oldest.getTime()) / 1000) : 0;
    if (pending && age > STALE_SECONDS) {
      return warn(
        `${pending} webhook message${pending === 1 ? '' : 's'} pending, the oldest for ${Math.round(age / 60)} minutes`,
        'is gatehouse serve running? see gatehouse webhook deliveries ID for what the receivers answer',
      );
    }
    return ok(pending ? `${pending} message${pending === 1 ? '' : 's'} pending` : 'no backlog');
  },
};
