import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../../log/logger.js';
import { isAppError, OUTAGE_BODY } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import { isDatabaseUnavailable } from '../../data/db-errors.js';
import { retryAfterOf, setRetryAfter } from './retry-after.js';

/** Seconds a client is asked to wait when the database is unreachable. */
export const DB_RETRY_AFTER_SEC = 5;

/**
 * Seconds to ask a client to wait when `err` is an outage (a dependency down: a 503 of ours, or the
 * database unreachable), else null. For answers written outside Express (the OpenID provider's Koa app).
 */
export function outageRetryAfter(err: unknown): number | null {
  if (isAppError(err)) return err.status === 503 ? retryAfterOf(err) : null;
  return isDatabaseUnavailable(err) ? DB_RETRY_AFTER_SEC : null;
}

export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json({ success: false, error: 'Not found', code: Codes.NOT_FOUND });
};

/**
 * The one wire shape for errors: `{success:false, error, code, details?}`; never a stack.
 * `onDatabaseUnavailable` learns of each outage answer: the outage itself is logged once, by the
 * database health tracker, and each 503 only counted (and logged at debug).
 */
export function errorHandler(logger: Logger, onDatabaseUnavailable: (err: unknown) => void = () => undefined): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) return;
    // Before the AppError branch too: a service may have wrapped nothing, but never an outage as a 4xx.
    if (!isAppError(err) && isDatabaseUnavailable(err)) {
      onDatabaseUnavailable(err);
      logger.debug({ err: (err as Error).message, reqId: (req as { id?: unknown }).id }, 'database unavailable; answering 503');
      res.setHeader('Retry-After', String(DB_RETRY_AFTER_SEC));
      res.status(503).json(OUTAGE_BODY);
      return;
    }
    if (isAppError(err)) {
      setRetryAfter(res, err);
      res.status(err.status).json({
        success: false,
        error: err.message,
        code: err.code,
        ...(err.details !== undefined ? { details: err.details } : {}),
        ...(err.extra ?? {}),
      });
      return;
    }
    // body-parser and multer errors carry a status or a code of their own.
    const e = err as { type?: string; status?: number; statusCode?: number; code?: string; message?: string };
    if (e.type === 'entity.parse.failed') {
      res.status(400).json({ success: false, error: 'Malformed JSON body', code: Codes.INVALID_JSON });
      return;
    }
    if (e.type === 'entity.too.large' || e.code === 'LIMIT_FILE_SIZE') {
      res.status(413).json({ success: false, error: 'Request body too large', code: Codes.PAYLOAD_TOO_LARGE });
      return;
    }
    if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
      res.status(415).json({ success: false, error: 'Unsupported body encoding', code: Codes.UNSUPPORTED_MEDIA_TYPE });
      return;
    }
    if (typeof e.code === 'string' && e.code.startsWith('LIMIT_')) {
      res.status(400).json({ success: false, error: e.message ?? 'Invalid upload', code: Codes.VALIDATION_ERROR });
      return;
    }
    const status = e.status ?? e.statusCode;
    // oidc-provider's refusals (an interaction that expired or was finished, a bad parameter) name their
    // OAuth error: passed on as the code, as the provider's own answers do (src/oidc/provider.ts, renderError).
    const oauth = err as { error?: unknown; error_description?: unknown };
    if (status && status >= 400 && status < 500 && typeof oauth.error === 'string' && /^[a-z_]{1,64}$/.test(oauth.error)) {
      const said = typeof oauth.error_description === 'string' ? oauth.error_description : oauth.error;
      res.status(status).json({ success: false, error: said, code: oauth.error.toUpperCase() });
      return;
    }
    if (status && status >= 400 && status < 500) {
      res.status(status).json({ success: false, error: 'Bad request', code: Codes.VALIDATION_ERROR });
      return;
    }
    logger.error({ err, reqId: (req as { id?: unknown }).id }, 'unhandled error');
    res.status(500).json({ success: false, error: 'Internal server error', code: Codes.INTERNAL });
  };
}
