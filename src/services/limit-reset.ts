import { hkdfSync } from 'node:crypto';
import { isIP } from 'node:net';
import type { AppContext } from '../app-context.js';
import type { Config } from '../config/schema.js';
import { ipLimitKey } from '../http/middleware/client-ip.js';
import { accountId, accountNetworkKey, type RateLimitClass } from '../http/middleware/rate-limit.js';

// Every route class; typed so that a class added to RateLimitClass must be added here too.
const CLASSES: Record<RateLimitClass, true> = {
  login: true,
  registration: true,
  'token-login': true,
  'token-validate': true,
  'social-login': true,
  'social-api': true,
  'cache-invalidation': true,
  admin: true,
  'second-factor': true,
  default: true,
  'bridge-invalid': true,
  // Keyed by session and by bridge secret, not by address: an --ip reset finds nothing there.
  session: true,
  bridge: true,
};

export interface ResetRequest {
  email?: string;
  ip?: string;
}

/**
 * Clears the limits that keep someone out of login (an operator's fix for a locked-out user):
 * - email: the account's budget from all sources;
 * - ip: that address's budget in every route class;
 * - both: also the account's lock and budget for that address's network (those keys are hashed
 *   per account and network, so they can only be found with both).
 * Returns the names of what was cleared.
 */
export async function resetLimits(app: AppContext, req: ResetRequest): Promise<string[]> {
  const { email, ip } = req;
  if (ip !== undefined && !isIP(ip)) throw new TypeError(`not an IP address: ${ip}`);
  const cleared: string[] = [];
  if (email) {
    await app.limiter.reset('login-account-all', accountId(email));
    cleared.push('login budget of the account from all sources');
  }
  if (ip) {
    const key = ipLimitKey(ip);
    for (const cls of Object.keys(CLASSES)) await app.limiter.reset(cls, key);
    cleared.push(`every route class for ${key}`);
  }
  if (email && ip) {
    const key = accountNetworkKey(email, ip);
    await app.limiter.reset('login-account', key);
    await app.loginBackoff.recordSuccess(key);
    cleared.push("the account's login budget and failed-login lock from that network");
  }
  return cleared;
}

/** The header `gatehouse limits reset` sends its key in (POST /internal/limits/reset). */
export const LIMITS_RESET_KEY_HEADER = 'x-gatehouse-admin-key';

/**
 * The key that lets `gatehouse limits reset` reach a running server without Redis: derived from both
 * secrets in config.json, so whoever can read that file (the operator, the service user) has it,
 * while a backend holding only the bridge secret does not. Null when no secret is configured.
 */
export function limitsResetKey(config: Pick<Config, 'cookieSecret' | 'bridgeSecret'>): string | null {
  if (!config.cookieSecret && !config.bridgeSecret) return null;
  const ikm = `${config.cookieSecret ?? ''}\n${config.bridgeSecret ?? ''}`;
  return Buffer.from(hkdfSync('sha256', ikm, 'gatehouse-admin', 'limits-reset', 32)).toString('base64url');
}
