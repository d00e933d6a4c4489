import type { RequestHandler } from 'express';
import type { Metrics } from './metrics.js';

/**
 * Counts every answer by route template (set by defineRoute in res.locals.route, or Express's own
 * route), never by raw path: unknown paths share the label `unmatched`, so scanners cannot blow up
 * the number of series.
 */
export function countRequests(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      const route = (res.locals.route as string | undefined) ?? (req.route ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched');
      metrics.httpRequest(req.method, route, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}
