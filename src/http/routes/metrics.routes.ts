import type { IncomingMessage } from 'node:http';
import type { Config } from '../../config/schema.js';
import { forbidden } from '../../errors/app-error.js';
import { metricsAccess, METRICS_CONTENT_TYPE, METRICS_FORBIDDEN } from '../../metrics/access.js';
import { defineRoute } from '../define-route.js';

const access = new WeakMap<Config, (req: IncomingMessage) => boolean>();

/**
 * Prometheus text (src/metrics). Not rate limited: a scraper polls it. Public as a route, but answered
 * only to loopback clients or a METRICS_TOKEN bearer; with METRICS_PORT it lives on that port instead.
 */
export const metrics = defineRoute({
  method: 'get',
  path: '/metrics',
  summary: 'Prometheus metrics of this instance',
  auth: 'public',
  rateLimit: false,
  async handler({ req, res, app }) {
    if (app.config.metricsPort) return undefined;
    let allowed = access.get(app.config);
    if (!allowed) access.set(app.config, (allowed = metricsAccess(app.config)));
    if (!allowed(req)) throw forbidden(METRICS_FORBIDDEN);
    const text = await app.metrics.scrape();
    res.status(200).type(METRICS_CONTENT_TYPE).send(text);
  },
});
