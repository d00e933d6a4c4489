import type http from 'node:http';
import { OUTAGE_BODY } from '../errors/app-error.js';
import { DB_RETRY_AFTER_SEC } from './middleware/errors.js';

/**
 * What a server answers while its app cannot open yet (`serve` started with the database down): the
 * process is alive (`/health` 200), not ready (`/ready` 503), and every other request is asked to come
 * back (503 with `Retry-After`), the same answers the app gives during an outage.
 */
export function unavailableHandler(since: Date): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const [status, body] =
      path === '/health'
        ? [200, { success: true, status: 'ok' }]
        : path === '/ready'
          ? [503, { success: false, status: 'unavailable', checks: { database: 'fail' }, degraded: [`database unavailable since ${since.toISOString()}`] }]
          : [503, OUTAGE_BODY];
    const text = JSON.stringify(body);
    // The request body is not needed; drain it so the connection stays usable.
    req.resume();
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      ...(status === 503 ? { 'Retry-After': String(DB_RETRY_AFTER_SEC) } : {}),
    });
    res.end(req.method === 'HEAD' ? undefined : text);
  };
}
