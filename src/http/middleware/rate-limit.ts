import type { Request, Response } from 'express';
import type { Config } from '../../config/schema.js';
import type { RateLimitClass } from '../../limits/limit-classes.js';
import { createLoginPolicy, type LoginAttempt } from '../../limits/login-policy.js';
import type { LimitResult } from '../../limits/rate-limiter.js';
import { markRefused } from './access-log.js';
import { clientIp } from './client-ip.js';
import { consumeClass, countedIn, hitIn, sendTooMany, setLimitHeaders, tooManyRequests, wasCounted, type RateLimitDeps } from './rate-limit-request.js';

import type { ClassifierDeps, LimitTarget, RateLimitClassifier, RouteLimit } from '../route-shape.js';
import { recordThrottled, type ThrottleAuditDeps } from './sign-in-throttle.js';

/** The route-limit shapes are declared with the route shapes (nothing of this pipeline in them). */
export type { ClassifierDeps, LimitTarget, RateLimitClass, RateLimitClassifier, RouteLimit } from '../route-shape.js';

/** What the route middleware needs: counting, and what its classifiers look at. */
export type RouteLimitDeps = RateLimitDeps & ClassifierDeps & ThrottleAuditDeps;

/** The classes a route's limit may count in. */
export const routeClasses = (limit: RouteLimit): readonly RateLimitClass[] => (typeof limit === 'string' ? [limit] : limit.classes);

/** A route's rate limit as documented: null for none, the class, or a classifier's classes joined by `|`. */
export function rateLimitLabel(limit: RouteLimit | false | undefined): string | null {
  if (limit === false) return null;
  if (limit === undefined) return 'default';
  return routeClasses(limit).join('|');
}

/** A classifier with the classes it may choose attached. */
export function classifier(
  classes: readonly RateLimitClass[],
  choose: (req: Request, deps: ClassifierDeps) => LimitTarget | Promise<LimitTarget>,
): RateLimitClassifier {
  return Object.assign(choose, { classes });
}

/** Counts a request where its route's limit puts it: the class per address, or what the classifier chose. */
export async function consumeRoute(deps: RouteLimitDeps, req: Request, res: Response, limit: RouteLimit): Promise<LimitResult | null> {
  if (typeof limit === 'string') return consumeClass(deps, req, res, limit);
  const target = await limit(req, deps);
  return consumeClass(deps, req, res, target.cls, target.key);
}

/**
 * For a handler that learns only while it runs which class a request belongs in (POST /auth/register:
 * public sign-up or admin create): counts it there too, unless it already was, and refuses with 429.
 */
export async function consumeClassOrThrow(deps: RateLimitDeps, req: Request, res: Response, cls: RateLimitClass): Promise<void> {
  const r = await consumeClass(deps, req, res, cls);
  if (r && !r.allowed) throw tooManyRequests(r);
}

/**
 * A route's own limit (route-pipeline.ts), for every way into the route: `check` counts the request in
 * the route's class unless it was counted there already (usually by the gate: then there is nothing to
 * wait for, and it answers null at once), and answers the refusal, or null when the request may go on.
 */
export function routeLimiter(limit: RouteLimit | undefined, deps: RouteLimitDeps): { check(req: Request, res: Response): Promise<LimitResult | null> | null } {
  const route = limit ?? 'default';
  // A classifier's class is known only per request; whatever the gate counted, it counted for this route.
  const counted = typeof route === 'string' ? (req: Request) => countedIn(req, route) : wasCounted;
  return {
    check(req, res) {
      if (!deps.config.rateLimitsEnabled || counted(req)) return null;
      return consumeRoute(deps, req, res, route).then((r) => (r && !r.allowed ? r : null));
    },
  };
}

/** Answers 429; a sign-in route refused by its class is recorded as `sign_in.throttled` (after the answer). */
export function refuse(deps: ThrottleAuditDeps, req: Request, res: Response, r: LimitResult, limit: RouteLimit): void {
  sendTooMany(res, r);
  recordThrottled(deps, req, typeof limit === 'string' ? limit : routeClasses(limit).join('|'));
}

/**
 * One login attempt on `identifier` under the per-account policy (src/limits/login-policy.ts), holding
 * the request's hit in `login` as well: sets the headers and throws 429 RATE_LIMITED when a budget
 * refuses. Run the password check through the attempt's `check`, which applies the refund rule.
 */
export async function consumeLoginAttempt(
  deps: RateLimitDeps & ThrottleAuditDeps & { config: Pick<Config, 'rateLimitLoginAccount'> },
  req: Request,
  res: Response,
  identifier: string,
): Promise<LoginAttempt> {
  const held = hitIn(req, 'login');
  const attempt = await createLoginPolicy(deps).consume({ identifier, ip: clientIp(req), held: held ? [held] : [] });
  for (const r of attempt.results) setLimitHeaders(res, r);
  const refused = attempt.results.at(-1);
  if (!attempt.allowed && refused) {
    markRefused(req, attempt.refusedIn ?? 'login-account');
    recordThrottled(deps, req, 'login_account', identifier);
    throw tooManyRequests(refused);
  }
  return attempt;
}
