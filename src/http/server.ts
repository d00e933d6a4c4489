import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../app-context.js';
import { createApp } from './create-app.js';
import { answerClientError } from './middleware/client-error.js';
import { Codes } from '../errors/codes.js';

export interface RunningServer {
  server: http.Server;
  port: number;
  url: string;
  /**
   * Graceful stop: answers every request that has reached this process (queued connections
   * included), each with `Connection: close`, stops accepting, and resolves once every connection
   * is closed. A request still unanswered after `graceMs` gets 503 with `Retry-After` (its work may
   * still finish, unseen); at most about a second later whatever is left is cut off.
   */
  close(graceMs?: number): Promise<void>;
  /** Replaces the request handler (a server that started before its app could open switches to it). */
  setHandler(handler: http.RequestListener): void;
}

/** The listener stays open until no connection has come in for this long, so queued ones are accepted, not reset. */
const BACKLOG_QUIET_MS = 100;
const BACKLOG_MAX_MS = 1_000;
/** An open connection with no request in flight is closed once idle this long after the stop began. */
const IDLE_CLOSE_MS = 250;

interface Tracked {
  active: number;
  idleSince: number;
}

/** Listens with the app; keeps header and request timeouts tight against slow clients. */
export function startServer(app: AppContext, opts: { port: number; host: string }): Promise<RunningServer> {
  return startHttpServer(createApp(app), opts);
}

/** After the grace period, what the unanswered requests get. */
const LATE_BODY = JSON.stringify({ success: false, error: 'The server is restarting; try again', code: Codes.SERVICE_UNAVAILABLE });
const LATE_RETRY_AFTER_SEC = '5';
/** How long the late answers get to reach their clients before the remaining connections are cut. */
const FLUSH_MS = 1_000;

export async function startHttpServer(handler: http.RequestListener, opts: { port: number; host: string }): Promise<RunningServer> {
  let current = handler;
  const server = http.createServer({ maxHeaderSize: 16 * 1024 }, (req, res) => current(req, res));
  server.headersTimeout = 20_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  server.on('clientError', answerClientError);

  const sockets = new Map<net.Socket, Tracked>();
  /** Answers not yet written: when the stop begins they too get `Connection: close`. */
  const unanswered = new Set<http.ServerResponse>();
  /** Every request being handled, for the answer at the end of the grace period. */
  const inFlight = new Set<http.ServerResponse>();
  let stopping = false;
  let lastConnectionAt = 0;
  server.on('connection', (socket: net.Socket) => {
    lastConnectionAt = Date.now();
    sockets.set(socket, { active: 0, idleSince: Date.now() });
    socket.once('close', () => sockets.delete(socket));
  });
  // Runs before the app's handler: once stopping, every answer tells the client to reconnect elsewhere.
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const t = sockets.get(req.socket);
    if (t) t.active += 1;
    if (stopping) res.setHeader('Connection', 'close');
    else unanswered.add(res);
    inFlight.add(res);
    res.once('close', () => {
      unanswered.delete(res);
      inFlight.delete(res);
      if (!t) return;
      t.active -= 1;
      t.idleSince = Date.now();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;

  /** Closes connections with nothing in flight; the check runs after a poll phase, so bytes already received become a request first. */
  const closeIdle = () =>
    new Promise<void>((resolve) =>
      setImmediate(() => {
        const now = Date.now();
        for (const [socket, t] of sockets) {
          if (t.active === 0 && now - t.idleSince >= IDLE_CLOSE_MS && socket.readableLength === 0) socket.end();
        }
        resolve();
      }),
    );

  return {
    server,
    port,
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    setHandler(next) {
      current = next;
    },
    async close(graceMs = 10_000) {
      if (stopping) return;
      stopping = true;
      for (const res of unanswered) if (!res.headersSent) res.setHeader('Connection', 'close');
      unanswered.clear();
      const started = Date.now();
      const deadline = started + graceMs;
      for (const t of sockets.values()) t.idleSince = Math.max(t.idleSince, started);
      // Accept what the kernel has already queued: closing the listener would reset those connections.
      while (Date.now() - lastConnectionAt < BACKLOG_QUIET_MS && Date.now() - started < BACKLOG_MAX_MS) {
        await new Promise((r) => setTimeout(r, 20));
      }
      // Stop listening only: http.Server#close would also drop idle keep-alive connections at once,
      // including ones whose request is on the wire but not yet read. Closed in the check phase,
      // right after the poll phase accepted every connection the kernel had queued: one that
      // completed its handshake since would be reset by the close.
      const listenerClosed = new Promise<void>((r) => setImmediate(() => net.Server.prototype.close.call(server, () => r())));
      while (sockets.size > 0 && Date.now() < deadline) {
        await closeIdle();
        await new Promise((r) => setTimeout(r, 25));
      }
      if (inFlight.size > 0) {
        for (const res of inFlight) answerLate(res);
        const flushEnd = Date.now() + FLUSH_MS;
        while (sockets.size > 0 && Date.now() < flushEnd) {
          await closeIdle();
          await new Promise((r) => setTimeout(r, 25));
        }
      }
      if (sockets.size > 0) server.closeAllConnections();
      for (const socket of sockets.keys()) socket.destroy();
      await listenerClosed;
    },
  };
}

/**
 * The grace period is over and this request has no answer: 503 with Retry-After and Connection:
 * close, instead of a reset. The handler may still finish; whatever it writes later goes nowhere.
 */
function answerLate(res: http.ServerResponse): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(503, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(LATE_BODY),
    'Retry-After': LATE_RETRY_AFTER_SEC,
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  res.end(LATE_BODY);
  res.setHeader = () => res;
  res.writeHead = () => res;
  res.write = () => true;
  res.end = () => res;
}
