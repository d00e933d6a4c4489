import { hkdfSync } from 'node:crypto';
import { isIP } from 'node:net';
import type { AppContext } from '../app-context.js';
import type { Config } from '../config/schema.js';
import { ipLimitKey } from '../http/middleware/client-ip.js';
import { limitClassesOf } from '../limits/limit-classes.js';
import { accountId, accountNetworkKey, LOGIN_ACCOUNT, LOGIN_ACCOUNT_ALL } from '../limits/login-policy.js';

export interface ResetRequest {
  email?: string;
  ip?: string;
}

/**
 * Clears the limits that keep someone out of login (an operator's fix for a locked-out user):
 * - email: the account's budget from all sources;
 * - ip: that address's budget in every route class, core's and the modules' (src/limits/limit-classes.ts;
 *   those keyed by session, bridge secret or user hold nothing under an address, and stay);
 * - both: also the account's lock and budget for that address's network (those keys are hashed
 *   per account and network, so they can only be found with both).
 * Returns the names of what was cleared.
 */
export async function resetLimits(app: Pick<AppContext, 'config' | 'limiter' | 'loginBackoff' | 'modules'>, req: ResetRequest): Promise<string[]> {
  const { email, ip } = req;
  if (ip !== undefined && !isIP(ip)) throw new TypeError(`not an IP address: ${ip}`);
  const cleared: string[] = [];
  if (email) {
    await app.limiter.reset(LOGIN_ACCOUNT_ALL, accountId(email));
    cleared.push('login budget of the account from all sources');
  }
  if (ip) {
    const key = ipLimitKey(ip);
    for (const cls of limitClassesOf(app.config, app.modules.registry()).all()) await app.limiter.reset(cls.name, key);
    cleared.push(`every route class for ${key}`);
  }
  if (email && ip) {
    const key = accountNetworkKey(email, ip);
    await app.limiter.reset(LOGIN_ACCOUNT, key);
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
