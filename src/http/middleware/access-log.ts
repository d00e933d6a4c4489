import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler } from 'express';
import type { Logger } from '../../log/logger.js';
import type { RefusalLog } from '../../log/refusal-log.js';
import { clientIp } from './client-ip.js';
import { redactUrl } from './request-id.js';

/*
 * The access log. A line per answer would be most of the log and most of a warm validation's cost,
 * and says nothing an operator acts on; so at LOG_LEVEL info a line is written for what is worth
 * reading: an answer that is not 2xx, a slow one (ACCESS_LOG_SLOW_MS or more), a request whose
 * client left before its answer. The rest are `debug` lines: LOG_LEVEL debug writes every answer
 * (docs/operations.md, "The access log"). A 503 is an answered outage (logged once by its health
 * tracker, counted in /metrics), so it is debug too; any other 5xx is an error.
 * The fast lane (src/http/fast-lane) writes its answers' lines with `accessLine`, the same function.
 *
 * A rate-limit refusal (a 429 whose request a limiter marked with markRefused) has no line of its own:
 * a client past its budget is refused thousands of times a second, and that many lines cost ten times
 * the refusal itself (issue 52). It is counted in the refusal log instead (src/log/refusal-log.ts): one
 * line per client address and limit class per minute, with the count.
 */

export type AccessLevel = 'error' | 'info' | 'debug';

/** The level of an answer's line: what decides whether it is written. */
export function accessLevel(status: number, ms: number, slowMs: number, aborted: boolean): AccessLevel {
  if (status === 503) return 'debug';
  if (status >= 500) return 'error';
  return aborted || status < 200 || status >= 300 || ms >= slowMs ? 'info' : 'debug';
}

/** Writes one answer's line, when its level is on: `(req, id, status, ms, aborted)`; `ms` unrounded. */
export type AccessLine = (req: IncomingMessage, id: string | undefined, status: number, ms: number, aborted: boolean) => void;

const REFUSED = Symbol('access log: refused in');

/** Marks the request as refused by the limit class `cls`: its 429 is counted in the refusal log, not written as a line. */
export function markRefused(req: IncomingMessage, cls: string): void {
  (req as { [REFUSED]?: string })[REFUSED] = cls;
}

/** The class that refused the request (markRefused), if one did. */
export const refusedIn = (req: IncomingMessage): string | undefined => (req as { [REFUSED]?: string })[REFUSED];

const USER = Symbol('access log: user');

/**
 * Records whose session the request carried, once it is known to be live (the API's route auth, the
 * pages' session): a 401 or 403 line names the user, even when the refusal came after (a role it lacks).
 */
export function markUser(req: IncomingMessage, userId: string): void {
  (req as { [USER]?: string })[USER] = userId;
}

/** Whom a refusal concerns: the user when known, and the client's address as TRUST_PROXY reads it (ASVS 16.3.2). */
function refusalFields(req: IncomingMessage): { userId?: string; clientIp: string } {
  const userId = (req as { [USER]?: string })[USER];
  // The app's requests are Express's (req.ip under `trust proxy`); the lane answers no 401 or 403.
  const ip = clientIp(req as Request);
  return userId ? { userId, clientIp: ip } : { clientIp: ip };
}

/**
 * The access line writer for `logger`, or null when no line can be written (above info). With
 * `refusals`, a 429 of a request a limiter refused (markRefused) is counted there instead of written.
 */
export function accessLine(logger: Logger, slowMs: number, refusals?: RefusalLog): AccessLine | null {
  if (!logger.isLevelEnabled('info')) return null;
  const debug = logger.isLevelEnabled('debug');
  return (req, id, status, ms, aborted) => {
    if (status === 429 && refusals) {
      const cls = refusedIn(req);
      // The app's requests only (the lane counts its own refusals): req.ip is Express's.
      if (cls !== undefined) return refusals.refused(clientIp(req as Request), cls);
    }
    const responseTime = Math.round(ms);
    const level = accessLevel(status, responseTime, slowMs, aborted);
    if (level === 'debug' && !debug) return;
    const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '';
    // Only what's needed: no headers (cookies, secrets), and no secrets in the URL.
    const entry = {
      req: { id, method: req.method, url: redactUrl(url), remoteAddress: req.socket?.remoteAddress },
      res: { statusCode: status },
      responseTime,
      ...(status === 401 || status === 403 ? refusalFields(req) : null),
    };
    logger[level](entry, aborted ? 'request aborted' : status >= 500 ? 'request errored' : 'request completed');
  };
}

const STARTED = Symbol('access log: started');

/** When the request began, for a request the fast lane read part of before the app got it. */
export function markStarted(req: IncomingMessage, at: number): void {
  (req as { [STARTED]?: number })[STARTED] = at;
}

/**
 * The middleware: the line is written when the answer is done or the connection is gone (`close`,
 * which Node emits on the response in both cases). Null when no line can be written.
 */
export function accessLog(logger: Logger, slowMs: number, refusals?: RefusalLog): RequestHandler | null {
  const write = accessLine(logger, slowMs, refusals);
  if (!write) return null;
  return (req, res, next) => {
    const started = (req as { [STARTED]?: number })[STARTED] ?? performance.now();
    res.once('close', () => write(req, (req as { id?: string }).id, res.statusCode, performance.now() - started, !res.writableEnded || req.readableAborted));
    next();
  };
}
