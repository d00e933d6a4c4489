import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type ReceiverMode = { kind: 'status'; status: number; location?: string } | { kind: 'hang' };

/**
 * A real local HTTP server standing in for an operator's app: it keeps every request it got and answers
 * as told (a status, or never — holding the request open).
 */
export async function startReceiver(mode: ReceiverMode = { kind: 'status', status: 200 }) {
  const received: ReceivedWebhook[] = [];
  let current = mode;
  const held = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      if (current.kind === 'hang') {
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      const headers: Record<string, string> = { 'content-type': 'text/plain' };
      if (current.location) headers.location = current.location;
      res.writeHead(current.status, headers).end(`answer ${current.status} ${'x'.repeat(2000)}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    setMode(m: ReceiverMode) {
      current = m;
    },
    async close() {
      for (const r of held) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** The settings a test app needs to deliver to a local http receiver quickly. */
export const WEBHOOK_TEST_ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0,1,1,1',
  WEBHOOK_TIMEOUT: '2',
};
