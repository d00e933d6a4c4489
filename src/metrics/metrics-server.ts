import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/schema.js';
import { metricsAccess, METRICS_CONTENT_TYPE, METRICS_FORBIDDEN } from './access.js';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

const sendJson = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
};

/** METRICS_PORT: /metrics alone on a port of its own, with the same access rule as on the API port. */
export async function startMetricsServer(scrape: () => Promise<string>, config: Config, port: number): Promise<MetricsServer> {
  const allowed = metricsAccess(config);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      return sendJson(res, 404, { success: false, error: 'Not found', code: 'NOT_FOUND' });
    }
    if (!allowed(req)) return sendJson(res, 403, { success: false, error: METRICS_FORBIDDEN, code: 'FORBIDDEN' });
    scrape().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => sendJson(res, 500, { success: false, error: 'Internal server error', code: 'INTERNAL_ERROR' }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${addr.port}/metrics`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
