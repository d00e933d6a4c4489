import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const SAFE_ID = /^[A-Za-z0-9._-]{8,64}$/;

/** The request's id: the incoming X-Request-ID when it is sane, else a new one. */
export const requestIdOf = (incoming: string | string[] | undefined): string =>
  typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();

/** Takes a sane incoming X-Request-ID (from the proxy) or makes one; echoes it on the response. */
export const requestId: RequestHandler = (req, res, next) => {
  const id = requestIdOf(req.headers['x-request-id']);
  (req as { id?: string }).id = id;
  res.setHeader('X-Request-ID', id);
  next();
};

// Gatehouse's own tokens (session, reset, verification, login) wherever they sit: the legacy reset
// check carries one as a path segment, and a query key may arrive percent-encoded (`%74oken=`).
const OWN_TOKEN = /\b(ses|rst|vfy|lgn)_[A-Za-z0-9_-]{16,}/g;

/** Query keys whose values are secrets whatever they look like. */
const SECRET_KEY = /token|code|secret|session|password|passwd|key|sig|auth|otp|nonce|state|verifier/i;
/** A value that looks like a token: 16 or more characters of the kinds tokens are made of. */
const TOKEN_LIKE = /^[A-Za-z0-9_\-.~%+/=]{16,}$/;

/**
 * Strips secrets from a URL before it is logged: our own tokens anywhere in it, the legacy reset
 * path segment, and any query value whose key names a secret or which looks like a token (links
 * from other systems, unknown parameter names, percent-encoded keys).
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  let out = url;
  if (q >= 0) {
    const [query, hash = ''] = url.slice(q + 1).split(/#(.*)/s, 2);
    const parts = query.split('&').map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const rawKey = pair.slice(0, eq);
      let key = rawKey;
      try {
        key = decodeURIComponent(rawKey);
      } catch {
        /* keep the raw key */
      }
      const value = pair.slice(eq + 1);
      return value && (SECRET_KEY.test(key) || TOKEN_LIKE.test(value)) ? `${rawKey}=[redacted]` : pair;
    });
    out = `${url.slice(0, q)}?${parts.join('&')}${hash ? `#${hash}` : ''}`;
  }
  return out.replace(/(\/password-reset\/validate\/)[^/?#]+/gi, '$1[redacted]').replace(OWN_TOKEN, '$1_[redacted]');
}
