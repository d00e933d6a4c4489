import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../app-context.js';
import { createRequestListener } from './create-app.js';
import { answerClientError } from './middleware/client-error.js';
import { Codes } from '../errors/codes.js';

export interface RunningServer {
  server: http.Server;
  port: number;
  url: string;
  /**
   * Graceful stop: keeps accepting new connections for `acceptMs` (default ACCEPT_AFTER_STOP_MS, at
   * most `graceMs`) and answers every request that reaches this process (queued connections
   * included), each with `Connection: close`, then stops accepting, and resolves once every connection
   * is closed. A request still unanswered after `graceMs` gets 503 with `Retry-After` (its work may
   * still finish, unseen); at most about 2.5 s later whatever is left is cut off.
   */
  close(graceMs?: number, opts?: { acceptMs?: number }): Promise<void>;
  /** Replaces the request handler (a server that started before its app could open switches to it). */
  setHandler(handler: http.RequestListener): void;
}

/**
 * After a stop begins the listener stays open this long (unless the grace period is shorter): a client
 * or proxy that connects just after SIGTERM is answered (normally, with `Connection: close`), not refused.
 */
export const ACCEPT_AFTER_STOP_MS = 1_000;

/**
 * Past that, the listener stays open until no connection has come in for this long, so queued ones are accepted,
 * not reset; under a burst that a busy process accepts slowly, at most LATE_ACCEPT_MS past the grace period.
 */
const BACKLOG_QUIET_MS = 100;
/** An open connection with no request in flight is closed once idle this long after the stop began. */
const IDLE_CLOSE_MS = 250;

/**
 * A connection and the answers open on it. They are kept on the connection, not in process-wide Sets:
 * an add and a delete per request on a long-lived Set makes V8 rebuild its table in the old
 * generation every few requests, garbage that only a mark-compact collects (src/cache/lru.ts).
 */
interface Tracked {
  idleSince: number;
  /** The answer open on it (null: none), and those of pipelined requests behind it. */
  open: http.ServerResponse | null;
  more: http.ServerResponse[] | null;
}

/** An answer closed: the next one behind it (if any) becomes the open one, so `open` is null only when none is left. */
function forget(t: Tracked, res: http.ServerResponse): void {
  if (t.open === res) t.open = t.more?.shift() ?? null;
  else if (t.more) {
    const i = t.more.indexOf(res);
    if (i >= 0) t.more.splice(i, 1);
  }
}

/** Every answer still open on the connections. */
function* openAnswers(sockets: Map<net.Socket, Tracked>, untracked: Set<http.ServerResponse>): Generator<http.ServerResponse> {
  for (const t of sockets.values()) {
    if (t.open) yield t.open;
    if (t.more) yield* t.more;
  }
  yield* untracked;
}

/** Listens with the app; keeps header and request timeouts tight against slow clients. */
export function startServer(app: AppContext, opts: { port: number; host: string }): Promise<RunningServer> {
  return startHttpServer(createRequestListener(app), opts);
}

/** Resolves in the check phase after the next poll phase (where libuv accepts queued connections). */
const afterPoll = () => new Promise<void>((r) => setTimeout(() => setImmediate(r), 0));

/** `GET /ready` (or HEAD), with or without a query. */
function isReadinessProbe(req: http.IncomingMessage): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const url = req.url ?? '';
  return url === '/ready' || url.startsWith('/ready?');
}

const DRAINING_BODY = JSON.stringify({ success: false, status: 'draining', checks: {}, degraded: ['the instance is stopping'] });

/** `/ready` while the instance stops: 503, so a proxy stops sending new work here while the open answers finish. */
function answerDraining(res: http.ServerResponse): void {
  res.writeHead(503, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(DRAINING_BODY),
    'Retry-After': LATE_RETRY_AFTER_SEC,
    'Cache-Control': 'no-store',
  });
  res.end(res.req.method === 'HEAD' ? undefined : DRAINING_BODY);
}

/** After the grace period, what the unanswered requests get. */
const LATE_BODY = JSON.stringify({ success: false, error: 'The server is restarting; try again', code: Codes.SERVICE_UNAVAILABLE });
const LATE_RETRY_AFTER_SEC = '5';
/** How long the late answers get to reach their clients before the remaining connections are cut. */
const FLUSH_MS = 1_000;
/** How long past the grace period a burst still being accepted may keep the listener open. */
const LATE_ACCEPT_MS = 1_500;

export async function startHttpServer(handler: http.RequestListener, opts: { port: number; host: string }): Promise<RunningServer> {
  let current = handler;
  /** Set when the grace period is over: whatever request still arrives is answered 503 at once. */
  let pastGrace = false;
  const server = http.createServer({ maxHeaderSize: 16 * 1024 }, (req, res) => {
    if (pastGrace) return answerLate(res);
    // Once stopping, every answer tells the client to reconnect elsewhere (those open when the stop began are told then).
    if (stopping) res.setHeader('Connection', 'close');
    // A load balancer probing readiness takes this instance out of rotation while it drains; everything else is still served.
    if (stopping && isReadinessProbe(req)) return answerDraining(res);
    current(req, res);
    // An answer given within the call (the fast lane's) is over: only the others are tracked until they close.
    if (res.writableEnded) idle(req.socket);
    else track(req.socket, res);
  });
  server.headersTimeout = 20_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  server.on('clientError', answerClientError);

  const sockets = new Map<net.Socket, Tracked>();
  /** Answers on a connection not tracked (never seen: its 'connection' came first; kept as a safeguard). */
  const untracked = new Set<http.ServerResponse>();
  let stopping = false;
  let lastConnectionAt = 0;
  let connections = 0;
  server.on('connection', (socket: net.Socket) => {
    connections += 1;
    lastConnectionAt = Date.now();
    sockets.set(socket, { idleSince: Date.now(), open: null, more: null });
    socket.once('close', () => sockets.delete(socket));
  });
  function idle(socket: net.Socket): void {
    const t = sockets.get(socket);
    if (t) t.idleSince = Date.now();
  }
  function track(socket: net.Socket, res: http.ServerResponse): void {
    const t = sockets.get(socket);
    if (!t) {
      untracked.add(res);
      res.once('close', () => untracked.delete(res));
      return;
    }
    if (t.open === null) t.open = res;
    else (t.more ??= []).push(res);
    res.once('close', () => {
      forget(t, res);
      t.idleSince = Date.now();
    });
  }

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
          if (t.open === null && now - t.idleSince >= IDLE_CLOSE_MS && socket.readableLength === 0) socket.end();
        }
        resolve();
      }),
    );

  /** Closes idle connections as they become idle, until none is left (unless `whileEmpty`) or `end` has passed. */
  const drainUntil = async (end: number, { whileEmpty = false } = {}) => {
    while ((whileEmpty || sockets.size > 0) && Date.now() < end) {
      await closeIdle();
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(25, end - Date.now()))));
    }
  };

  return {
    server,
    port,
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    setHandler(next) {
      current = next;
    },
    async close(graceMs = 10_000, opts: { acceptMs?: number } = {}) {
      if (stopping) return;
      stopping = true;
      for (const res of openAnswers(sockets, untracked)) if (!res.headersSent) res.setHeader('Connection', 'close');
      const started = Date.now();
      const deadline = started + graceMs;
      for (const t of sockets.values()) t.idleSince = Math.max(t.idleSince, started);
      // New connections are still accepted and served for a while: closing the listener at once
      // would refuse the clients that connect in the moment after the signal. Meanwhile the
      // keep-alive connections that fall idle are closed, as in the drain below.
      await drainUntil(started + Math.max(0, Math.min(opts.acceptMs ?? ACCEPT_AFTER_STOP_MS, graceMs)), { whileEmpty: true });
      // Accept what the kernel has already queued: closing the listener would reset those connections.
      // A busy process may not have accepted a burst yet however long ago the last one was taken, so
      // the listener stays open until one whole poll phase has passed with no new connection (and no
      // connection has arrived for BACKLOG_QUIET_MS, for handshakes still under way), then closes in
      // the check phase right after that poll: a connection could only slip in within microseconds.
      // Past the grace period the listener stays open a little longer while a burst is still being
      // accepted; those late requests get 503 at once.
      const graceOver = () => {
        if (pastGrace) return;
        pastGrace = true;
        for (const res of [...openAnswers(sockets, untracked)]) answerLate(res);
      };
      let seen = -1;
      while ((connections !== seen || Date.now() - lastConnectionAt < BACKLOG_QUIET_MS) && Date.now() < deadline + LATE_ACCEPT_MS) {
        if (Date.now() >= deadline) graceOver();
        seen = connections;
        await afterPoll();
      }
      // Stop listening only: http.Server#close would also drop idle keep-alive connections at once,
      // including ones whose request is on the wire but not yet read.
      const listenerClosed = new Promise<void>((r) => net.Server.prototype.close.call(server, () => r()));
      await drainUntil(deadline);
      graceOver();
      await drainUntil(Date.now() + FLUSH_MS);
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
