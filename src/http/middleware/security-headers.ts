import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * Helmet's headers, computed once. Helmet's defaults are static (no per-request nonce), so the set
 * it writes is the same for every response; recording it at startup and writing it in one loop
 * keeps helmet the source of truth while dropping a dozen middleware hops from every request.
 */
export function securityHeaders(options?: Readonly<HelmetOptions>): RequestHandler {
  const set = new Map<string, string | number | readonly string[]>();
  const removed = new Set<string>();
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      set.set(name, value);
      removed.delete(name.toLowerCase());
      return recorder;
    },
    removeHeader(name: string) {
      set.delete(name);
      removed.add(name.toLowerCase());
    },
    getHeader: () => undefined,
  };
  let finished = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => {
    finished = true;
  });
  if (!finished) throw new Error('helmet did not complete synchronously; cannot precompute security headers');
  const headers = [...set.entries()];
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}
