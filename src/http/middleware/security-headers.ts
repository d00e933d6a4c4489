import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * Helmet's headers, computed once. Helmet's defaults are static (no per-request nonce), so the set
 * it writes is the same for every response; recording it at startup and writing it in one loop
 * keeps helmet the source of truth while dropping a dozen middleware hops from every request.
 */
export function securityHeaders(options?: Readonly<HelmetOptions>, extra: Record<string, string> = {}): RequestHandler {
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
  // The recorder has the methods helmet calls on a response; a missing one would throw here, at start.
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => {
    finished = true;
  });
  if (!finished) throw new Error('helmet did not complete synchronously; cannot precompute security headers');
  for (const [name, value] of Object.entries(extra)) set.set(name, value);
  const headers = [...set.entries()];
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}

/**
 * Helmet for a JSON API (the OWASP REST Security Cheat Sheet's set): a CSP that allows nothing and no
 * framing, nosniff, HSTS, CORP same-origin (no cross-site no-cors reads), no Referer (some links carry
 * tokens). Left out are the headers that only mean something for HTML documents or obsolete browsers
 * (COOP, Origin-Agent-Cluster, X-DNS-Prefetch-Control, X-Download-Options,
 * X-Permitted-Cross-Domain-Policies, X-XSS-Protection): every answer is JSON.
 */
export const API_HELMET: Readonly<HelmetOptions> = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
  xFrameOptions: { action: 'deny' },
};

/** API answers carry sessions, tokens and personal data: no cache (browser or proxy) may keep them. */
export const apiSecurityHeaders = (): RequestHandler => securityHeaders(API_HELMET, { 'Cache-Control': 'no-store' });
