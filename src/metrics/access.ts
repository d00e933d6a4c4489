import type { IncomingMessage } from 'node:http';
import type { Config } from '../config/schema.js';
import { secretMatcher } from '../services/security/tokens.js';

const isLoopback = (addr: string | undefined) => !!addr && (/^127\./.test(addr) || addr === '::1' || /^::ffff:127\./.test(addr));

// A request relayed by a proxy on this host arrives from loopback too: it is not a local client.
const PROXIED = ['x-forwarded-for', 'forwarded', 'x-real-ip'];

/**
 * Who may read /metrics: a client on this host talking to it directly, or anyone presenting
 * METRICS_TOKEN as a bearer token (compared in constant time).
 */
export function metricsAccess(config: Config): (req: IncomingMessage) => boolean {
  const tokenMatches = config.metricsToken ? secretMatcher(config.metricsToken) : () => false;
  return (req) => {
    const auth = req.headers.authorization;
    if (typeof auth === 'string' && /^Bearer /i.test(auth) && tokenMatches(auth.slice(7).trim())) return true;
    return isLoopback(req.socket.remoteAddress) && !PROXIED.some((h) => req.headers[h] !== undefined);
  };
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export const METRICS_FORBIDDEN = 'Metrics are readable from this host only; scrape with Authorization: Bearer <METRICS_TOKEN> from elsewhere';
