import type { Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import type { AuthState } from '../http/request-context.js';
import { assertRouteAuth, type AuthFor, type AuthMode, type RouteLimit } from '../http/route-shape.js';
import type { ModuleContext } from './module-context.js';

export type { AuthFor, SignedIn } from '../http/route-shape.js';
/** A request that may or may not carry a session (public, bridge, optional-session routes). */
export type MaybeSignedIn = AuthState;

export interface ModuleHandlerArgs<B, Q, P, M> {
  req: Request;
  res: Response;
  body: B;
  query: Q;
  params: P;
  auth: AuthFor<M>;
  /** The module's own context: the only way into core. */
  ctx: ModuleContext;
}

/**
 * A module's route: like a core route (http/define-route.ts), but its handler gets the module's
 * context instead of the app. Its types come from http/route-shape.ts alone: nothing of the HTTP
 * pipeline, which serves it (http/module-router.ts).
 */
export interface ModuleRouteDef<B = unknown, Q = unknown, P = unknown, M extends AuthMode = AuthMode> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  /** What the route does, in a short line (under 80 characters): its summary at /docs (see RouteDef.summary). */
  summary?: string;
  auth: M;
  /** The owning module's id (checked against the manifest). */
  module: string;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  /** The spec's limit class, or a classifier (`perSession`); routes without one get the default class. */
  rateLimit?: RouteLimit | false;
  /** Runs after auth, before validation (e.g. multipart parsing). */
  middleware?: RequestHandler[];
  handler(args: ModuleHandlerArgs<B, Q, P, M>): Promise<unknown> | unknown;
}

/** A module route of any types: what a manifest's route list holds (`any` for the reason of AnyRouteDef in http/define-route.ts). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- route lists are heterogeneous: the handler takes these types as parameters
export type AnyModuleRouteDef = ModuleRouteDef<any, any, any, any>;

/**
 * Declares a module route. `auth` is required (fail closed) and narrows the handler's `auth`:
 * 'session', 'session-or-pending', 'bridge+session' and `{ roles }` give a SignedIn.
 */
export function defineRoute<B = undefined, Q = Record<string, unknown>, P = Record<string, string>, const M extends AuthMode = AuthMode>(
  def: ModuleRouteDef<B, Q, P, M>,
): ModuleRouteDef<B, Q, P, M> {
  // The same checks as core routes (explicit auth, roles named).
  assertRouteAuth(def);
  return def;
}
