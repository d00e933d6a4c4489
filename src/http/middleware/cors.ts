import type { RequestHandler } from 'express';

/** What a cross-origin script may read of an answer. */
export const CORS_EXPOSE_HEADERS = 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-ID';

/** Whether a request's Origin is one CORS answers for: one of the configured origins (`*` is refused by the config, and matches nothing here). */
export function corsAllows(origins: string[]): (origin: string | undefined) => origin is string {
  const allowed = new Set(origins.map((o) => o.replace(/\/+$/, '')));
  return (origin): origin is string => !!origin && allowed.has(origin);
}

/** CORS for configured browser origins only, with credentials; preflights answered here. */
export function cors(origins: string[]): RequestHandler {
  const allows = corsAllows(origins);
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (allows(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Vary', 'Origin');
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', 'GET,POST,PUT,PATCH,DELETE,OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'Content-Type, X-Session-ID, X-Bridge-Secret');
        res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
        res.setHeader('Access-Control-Max-Age', '600');
        res.status(204).end();
        return;
      }
      res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
    }
    next();
  };
}
