/**
 * The shape of a route as a route table declares it — who may call it, what the handler's `auth`
 * holds, its rate-limit class — with nothing of the HTTP pipeline: no express middleware, no rate
 * limiter, no app context. Core routes (define-route.ts) and module routes (modules/module-route.ts)
 * both build on it, so a module's route types do not pull in the HTTP layer.
 */
import type { Request } from 'express';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import type { AuthState } from './request-context.js';
import type { RateLimitClass } from '../limits/limit-classes.js';
import type { Config } from '../config/schema.js';

export type UserType = 'customer' | 'writer' | 'admin' | 'superadmin';

/**
 * Who may call a route. There is no default: a route without `auth` is refused at registration.
 * - public: anyone
 * - session: a full (active) session
 * - session-or-pending: a full session or one waiting for two-factor
 * - optional-session: anyone; a valid full session, when one is sent, is there too (an invalid,
 *   expired or pending one is treated as none)
 * - bridge: the X-Bridge-Secret header
 * - bridge+session: both
 * - { roles }: a full session whose user_type is one of these
 */
export type AuthMode = 'public' | 'session' | 'session-or-pending' | 'optional-session' | 'bridge' | 'bridge+session' | { roles: readonly UserType[] };

/** A request with a session: `user`, `session` and `token` are there, no assertion needed. */
export interface SignedIn extends AuthState {
  user: UserRecord;
  session: SessionRecord;
  token: string;
}

/** What `auth` holds for a route's mode: a session for the session modes; maybe one otherwise (and when decided from configuration). */
export type AuthFor<M> = M extends 'session' | 'session-or-pending' | 'bridge+session' | { roles: readonly UserType[] } ? SignedIn : AuthState;

/** The rate-limit classes: core's and modules' `module:<id>:<name>` (the table is data: limits/limit-classes.ts). */
export type { RateLimitClass } from '../limits/limit-classes.js';

/** Where one request is counted: a class, and the key inside it (an address, a session, the bridge secret). */
export interface LimitTarget {
  cls: RateLimitClass;
  key: string;
}

/** What a classifier may look at besides the request. */
export interface ClassifierDeps {
  config: Pick<Config, 'bridgeSecret'>;
  services: { sessions: { liveSessionId(token: string | null | undefined): Promise<string | null> } };
}

/**
 * Chooses class and key per request, for routes whose caller decides the budget (see
 * middleware/rate-limit-classes.ts). `classes` lists the classes it can choose, for the API reference.
 */
export type RateLimitClassifier = ((req: Request, deps: ClassifierDeps) => LimitTarget | Promise<LimitTarget>) & {
  readonly classes: readonly RateLimitClass[];
};

/** What a route declares: a class counted per client address, or a classifier. */
export type RouteLimit = RateLimitClass | RateLimitClassifier;

/**
 * The limit a route counts in, from its definition: its own, `default` without one, false for a probe.
 * The one reading of `rateLimit`: the rate-limit gate's table of routes and the route's pipeline both use it.
 */
export const routeLimitOf = (def: { rateLimit?: RouteLimit | false }): RouteLimit | false => (def.rateLimit === false ? false : (def.rateLimit ?? 'default'));

/** Refuses a route without an explicit auth (so every route fails closed), or with roles naming nobody. */
export function assertRouteAuth(def: { method?: string; path?: string; auth?: unknown } | null | undefined): void {
  if (!def || def.auth === undefined || def.auth === null) {
    throw new Error(`route ${def?.method?.toUpperCase()} ${def?.path} has no auth; declare auth explicitly`);
  }
  const auth = def.auth as { roles?: unknown };
  if (typeof auth === 'object' && (!Array.isArray(auth.roles) || auth.roles.length === 0)) {
    throw new Error(`route ${def.method?.toUpperCase()} ${def.path}: roles must name at least one user type`);
  }
}
