import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import type { Config } from '../config/schema.js';
import { AppError, unauthorized } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import { invalidInput } from '../errors/zod-issues.js';
import { assertRouteAuth, type AuthFor, type AuthMode } from './route-shape.js';
import type { RouteLimit } from './middleware/rate-limit.js';

export type { AuthFor, AuthMode, SignedIn, UserType } from './route-shape.js';

export type RouteAuth = AuthMode | ((config: Config) => AuthMode);

export interface HandlerArgs<B, Q, P, M = RouteAuth> {
  req: Request;
  res: Response;
  body: B;
  query: Q;
  params: P;
  /** Narrowed by the route's mode: handlers of session routes need no non-null assertions. */
  auth: AuthFor<M>;
  app: AppContext;
}

export interface RouteDef<B = unknown, Q = unknown, P = unknown, M extends RouteAuth = RouteAuth> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  /**
   * What the route does, in a short line (under 80 characters; not the method and path again): the
   * operation's summary at /docs and in /openapi.json. An alias says which route it stands for.
   */
  summary?: string;
  /** Static, or decided from configuration (e.g. a bridge secret requirement that is configurable). */
  auth: M;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  /**
   * The spec's limit class, or a classifier choosing class and key per request; routes without one
   * get the configurable default. `false` only for probes (/health, /ready, /metrics), which
   * monitors poll often and which must never answer 429.
   */
  rateLimit?: RouteLimit | false;
  /** Runs after auth, before validation (e.g. multipart parsing). */
  middleware?: RequestHandler[];
  /** Routes owned by a module are answered 503 MODULE_DISABLED while it is switched off. */
  module?: string;
  /** Return a value to send it as JSON with status 200; or write to `res` yourself. */
  handler(args: HandlerArgs<B, Q, P, M>): Promise<unknown> | unknown;
}

/** What is known of a route without running it (documentation, rate-limit classification): core and module routes alike. */
export type RouteShape = Omit<AnyRouteDef, 'handler'>;

/**
 * A route of any body, query and params types: what a route table holds. `any`, not `unknown`: the
 * handler takes these types as parameters, so a RouteDef<unknown, …> would refuse every concrete route.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- route tables are heterogeneous (see above)
export type AnyRouteDef = RouteDef<any, any, any>;

/** Declares a route; refuses one without an explicit auth so every route fails closed. */
export function defineRoute<B = undefined, Q = Record<string, unknown>, P = Record<string, string>, const M extends RouteAuth = RouteAuth>(
  def: RouteDef<B, Q, P, M>,
): RouteDef<B, Q, P, M> {
  assertRouteAuth(def);
  return def;
}

/** Far beyond any real payload; deeper input would overflow the recursive validators and serialisers. */
export const MAX_BODY_DEPTH = 64;

/** Refuses a request without the valid bridge secret: 503 while none is configured, else 401. */
export function requireBridge(sent: boolean, app: AppContext): void {
  if (!app.config.bridgeSecret) throw new AppError(503, Codes.SERVICE_UNAVAILABLE, 'Bridge validation is not configured');
  if (!sent) throw unauthorized('Invalid bridge secret', Codes.INVALID_BRIDGE_SECRET);
}

/** `value` parsed by `schema` (400 VALIDATION_ERROR with `details` when it fails); `value` as it is without one. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown): T;
export function parseWith(schema: z.ZodType | undefined, value: unknown): unknown;
export function parseWith(schema: z.ZodType | undefined, value: unknown): unknown {
  if (!schema) return value;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidInput(parsed.error);
  return parsed.data;
}
