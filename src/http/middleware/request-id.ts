import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const SAFE_ID = /^[A-Za-z0-9._-]{8,64}$/;

/** Takes a sane incoming X-Request-ID (from the proxy) or makes one; echoes it on the response. */
export const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
  (req as { id?: string }).id = id;
  res.setHeader('X-Request-ID', id);
  next();
};

// Gatehouse's own tokens (session, reset, verification, login) wherever they sit: the legacy reset
// check carries one as a path segment, and a query key may arrive percent-encoded (`%74oken=`).
const OWN_TOKEN = /\b(ses|rst|vfy|lgn)_[A-Za-z0-9_-]{16,}/g;

/** Strips secrets from a URL before it is logged. */
export function redactUrl(url: string): string {
  return url
    .replace(/([?&](?:session_id|token|code|sessionId)=)[^&#]*/gi, '$1[redacted]')
    .replace(/(\/password-reset\/validate\/)[^/?#]+/gi, '$1[redacted]')
    .replace(OWN_TOKEN, '$1_[redacted]');
}
