import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { AuthFor, AuthMode, RouteDef, SignedIn } from '../http/define-route.js';
import { defineRoute as defineCoreRoute } from '../http/define-route.js';
import type { AuthState } from '../http/request-context.js';
import type { ModuleContext } from './module-context.js';

export type { AuthFor, SignedIn } from '../http/define-route.js';
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

/** A module's route: like a core route, but its handler gets the module's context instead of the app. */
export interface ModuleRouteDef<B = unknown, Q = unknown, P = unknown, M extends AuthMode = AuthMode> extends Omit<
  RouteDef<B, Q, P>,
  'handler' | 'auth' | 'module' | 'body' | 'query' | 'params'
> {
  auth: M;
  /** The owning module's id (checked against the manifest). */
  module: string;
  body?: z.ZodType<B, any>;
  query?: z.ZodType<Q, any>;
  params?: z.ZodType<P, any>;
  handler(args: ModuleHandlerArgs<B, Q, P, M>): Promise<unknown> | unknown;
}

/**
 * Declares a module route. `auth` is required (fail closed) and narrows the handler's `auth`:
 * 'session', 'session-or-pending', 'bridge+session' and `{ roles }` give a SignedIn.
 */
export function defineRoute<B = undefined, Q = Record<string, unknown>, P = Record<string, string>, const M extends AuthMode = AuthMode>(
  def: ModuleRouteDef<B, Q, P, M>,
): ModuleRouteDef<B, Q, P, M> {
  // The same checks as core routes (explicit auth, roles named).
  defineCoreRoute({ ...def, handler: () => undefined } as RouteDef<B, Q, P>);
  return def;
}

/** The core route that serves a module route, its handler given the module's context. */
export function toCoreRoute(def: ModuleRouteDef<any, any, any, any>, ctx: ModuleContext): RouteDef<any, any, any> {
  return {
    ...def,
    handler: ({ req, res, body, query, params, auth }) => def.handler({ req, res, body, query, params, auth: auth as SignedIn, ctx }),
  };
}
