import { createHash } from 'node:crypto';
import type { Config } from '../config/schema.js';
import { isDatabaseUnavailable } from '../data/db-errors.js';
import { ipNetworkKey } from '../http/middleware/client-ip.js';
import { consumeFailingOpen, type CountingDeps, type Hit } from './fail-open.js';
import type { LimitResult, LimitRule } from './rate-limiter.js';

/*
 * Login, per account (docs/rate-limits.md). The route's `login` class already limits each client
 * address. On top of it:
 * - `login-account`: the Login figures per (account, source network: IPv4 /24, IPv6 /48), so one
 *   source gets the same few guesses at an account however many addresses it rotates through
 *   inside its network;
 * - `login-account-all`: a larger budget per account from all sources together
 *   (RATE_LIMIT_LOGIN_ACCOUNT, default 10 x Login), so a botnet cannot spray one account.
 * A source refused by its own share is not counted in the shared budget, so no single source can
 * exhaust it and lock the owner out from everywhere; that takes ten networks' worth of attempts.
 *
 * The refund rule: an attempt whose credential check fails through no fault of the caller's (the
 * database unreachable) gives back every hit it holds — the address's hit in the route's class and
 * the account budgets it took, and only those — so an outage leaves no account locked once it is over.
 * The attempt records what it took, so the rule holds whatever order its caller does things in.
 */

export const LOGIN_ACCOUNT = 'login-account';
export const LOGIN_ACCOUNT_ALL = 'login-account-all';

export interface LoginPolicyDeps extends CountingDeps {
  config: Pick<Config, 'rateLimitsEnabled' | 'rateLimitLogin' | 'rateLimitLoginAccount'>;
  metrics: { rateLimited(cls: string): void };
}

export interface LoginAttempt {
  /** False when a budget refused the attempt: then it holds nothing and may not be checked. */
  allowed: boolean;
  /** Each budget counted, in order; when refused, the last is the one that refused. */
  results: LimitResult[];
  /** When refused, the budget that refused it (`login-account` or `login-account-all`). */
  refusedIn?: string;
  /** Key of the failed-login backoff: the account and the caller's network (never locks the owner out elsewhere). */
  backoffKey: string;
  /**
   * Runs the credential check of an allowed attempt. When it throws through no fault of the caller's,
   * every hit the attempt holds goes back (once), then the error is rethrown.
   */
  check<T>(fn: (backoffKey: string) => Promise<T>): Promise<T>;
}

export interface LoginPolicy {
  /**
   * Counts one login attempt on `identifier` (e-mail or user name, any case) from `ip`. `held` are the
   * hits already taken for this request elsewhere (the gate's hit in the route's class), which the
   * attempt gives back with its own under the refund rule. Call it after validating the body, before
   * checking the password.
   */
  consume(input: { identifier: string; ip: string; held?: readonly Hit[] }): Promise<LoginAttempt>;
}

/** The shared per-account budget: RATE_LIMIT_LOGIN_ACCOUNT, or ten times the Login attempts over the Login window. */
export function accountLimitRule(config: Pick<Config, 'rateLimitLogin' | 'rateLimitLoginAccount'>): LimitRule {
  return config.rateLimitLoginAccount ?? { points: config.rateLimitLogin.points * 10, durationSec: config.rateLimitLogin.durationSec };
}

/** Identifiers compare case-insensitively; stored keys are hashed so addresses never sit in Redis in clear. */
export function accountId(identifier: string): string {
  const norm = identifier.normalize('NFKC').trim().toLowerCase();
  return norm ? createHash('sha256').update(norm).digest('base64url') : '';
}

/** The account and the caller's network (/24, /48): the key of `login-account` and of the failed-login backoff. */
export const accountNetworkKey = (identifier: string, ip: string): string => `${accountId(identifier)}|${ipNetworkKey(ip)}`;

/** Errors that are no fault of the caller's: the attempt's hits go back. */
export const isNoFaultOfCaller = (err: unknown): boolean => isDatabaseUnavailable(err);

export function createLoginPolicy(deps: LoginPolicyDeps): LoginPolicy {
  const { config } = deps;
  return {
    async consume({ identifier, ip, held = [] }) {
      const account = accountId(identifier);
      const backoffKey = accountNetworkKey(identifier, ip);
      const taken: Hit[] = [...held];
      const results: LimitResult[] = [];
      const budgets: { bucket: string; key: string; rule: LimitRule }[] =
        config.rateLimitsEnabled && account
          ? [
              { bucket: LOGIN_ACCOUNT, key: backoffKey, rule: config.rateLimitLogin },
              { bucket: LOGIN_ACCOUNT_ALL, key: account, rule: accountLimitRule(config) },
            ]
          : [];
      let allowed = true;
      let refusedIn: string | undefined;
      for (const b of budgets) {
        const r = await consumeFailingOpen(deps, b.bucket, b.key, b.rule);
        results.push(r);
        if (!r.allowed) {
          deps.metrics.rateLimited(b.bucket);
          allowed = false;
          refusedIn = b.bucket;
          break;
        }
        taken.push({ bucket: b.bucket, key: b.key, resetAt: r.resetAt });
      }
      let refunded = false;
      const refund = async () => {
        if (refunded || !config.rateLimitsEnabled) return;
        refunded = true;
        await Promise.all(taken.map((h) => deps.limiter.refund(h.bucket, h.key, h.resetAt))).catch((err: Error) =>
          deps.logger.warn({ err: err.message }, 'could not refund a login attempt'),
        );
      };
      return {
        allowed,
        results,
        ...(refusedIn !== undefined && { refusedIn }),
        backoffKey,
        async check(fn) {
          if (!allowed) throw new Error('a refused login attempt cannot be checked');
          try {
            return await fn(backoffKey);
          } catch (err) {
            if (isNoFaultOfCaller(err)) await refund();
            throw err;
          }
        },
      };
    },
  };
}
