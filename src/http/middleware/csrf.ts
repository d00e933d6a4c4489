import type { Request } from 'express';
import type { Config } from '../../config/schema.js';
import { forbidden } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import type { AuthState } from '../request-context.js';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const originOf = (value: string): string | null => {
  try {
    const o = new URL(value).origin;
    return o === 'null' ? null : o;
  } catch {
    return null;
  }
};

/** The origins a cookie-authenticated state change may come from: the public URL and CORS_ORIGINS. */
export function trustedOrigins(config: Pick<Config, 'publicBaseUrl' | 'corsOrigins'>): Set<string> {
  const set = new Set<string>();
  for (const o of [config.publicBaseUrl, ...config.corsOrigins]) {
    const origin = originOf(o);
    if (origin) set.add(origin);
  }
  return set;
}

/**
 * CSRF defence for sessions carried by the cookie, which a browser attaches to cross-site requests
 * by itself (SameSite=lax still lets top-level form posts from a sibling subdomain through; =none
 * lets everything through). A header or query token cannot be forged that way, and a valid bridge
 * secret proves a server caller, so only cookie-authenticated state changes are checked: they
 * must name a trusted Origin, or failing that a Referer from one. Anything else is 403 CSRF_REJECTED.
 */
export function assertSameOrigin(req: Request, auth: Pick<AuthState, 'tokenSource' | 'bridge'>, config: Pick<Config, 'publicBaseUrl' | 'corsOrigins'>): void {
  if (auth.tokenSource !== 'cookie' || auth.bridge || !STATE_CHANGING.has(req.method)) return;
  const trusted = trustedOrigins(config);
  const origin = req.headers.origin;
  const referer = req.headers.referer;
  const from = typeof origin === 'string' && origin !== '' ? originOf(origin) : typeof referer === 'string' ? originOf(referer) : null;
  if (from && trusted.has(from)) return;
  throw forbidden('Cross-site request rejected', Codes.CSRF_REJECTED);
}
