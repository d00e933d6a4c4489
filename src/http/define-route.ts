import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import type { Config } from '../config/schema.js';
import { AppError, badRequest, forbidden, unauthorized } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import { invalidInput } from '../errors/zod-issues.js';
import { nestsDeeperThan, nulPath } from '../services/security/json-depth.js';
import { secretMatcher } from '../services/security/tokens.js';
import { readSessionToken, type AuthState } from './request-context.js';
import { assertRouteAuth, type AuthFor, type AuthMode, type UserType } from './route-shape.js';
import { rateLimitFor, type RouteLimit } from './middleware/rate-limit.js';
import { refusedBeforeCredentials } from './middleware/credential-limits.js';
import { markUser } from './middleware/access-log.js';
import { assertSameOrigin } from './middleware/csrf.js';
import { sendJson } from './respond.js';
import { readAsJson } from './middleware/json-body.js';
import { withAuditScope } from '../audit/audit-scope.js';
import { requestAuditScope } from './request-audit.js';

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

const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);
/** Far beyond any real payload; deeper input would overflow the recursive validators and serialisers. */
export const MAX_BODY_DEPTH = 64;
const JSON_TYPES = ['application/json', 'application/*+json'];

/** Refuses a request without the valid bridge secret: 503 while none is configured, else 401. */
export function requireBridge(sent: boolean, app: AppContext): void {
  if (!app.config.bridgeSecret) throw new AppError(503, Codes.SERVICE_UNAVAILABLE, 'Bridge validation is not configured');
  if (!sent) throw unauthorized('Invalid bridge secret', Codes.INVALID_BRIDGE_SECRET);
}

/**
 * `seen` is what the request carries (token, where from, a valid bridge secret), read once per request.
 * Answers without a promise where no session is looked up (public and bridge-only routes).
 */
function resolveAuth(req: Request, seen: Pick<AuthState, 'token' | 'tokenSource' | 'bridge'>, mode: AuthMode, app: AppContext): AuthState | Promise<AuthState> {
  const state: AuthState = { token: seen.token, tokenSource: seen.tokenSource, bridge: seen.bridge, session: null, user: null };
  if (mode === 'public') return state;
  if (mode === 'optional-session') return state.token ? optionalSession(req, state, app) : state;
  if (mode === 'bridge' || mode === 'bridge+session') {
    requireBridge(seen.bridge, app);
    if (mode === 'bridge') return state;
  }
  return withSession(req, state, mode, app);
}

async function optionalSession(req: Request, state: AuthState, app: AppContext): Promise<AuthState> {
  try {
    const v = await app.services.sessions.validate(state.token);
    state.session = v.session;
    state.user = v.user;
    markUser(req, v.user.id);
  } catch (err) {
    // A bad token reads as no token; an outage is still an outage.
    if (!(err instanceof AppError) || err.status !== 401) throw err;
  }
  return state;
}

async function withSession(req: Request, state: AuthState, mode: AuthMode, app: AppContext): Promise<AuthState> {
  if (!state.token) throw unauthorized('Authentication required');
  const v = await app.services.sessions.validate(state.token, { allowPending: mode === 'session-or-pending' });
  state.session = v.session;
  state.user = v.user;
  // Named in the access line should the answer be a 401 or 403 (the role check below, or the handler's).
  markUser(req, v.user.id);
  if (typeof mode === 'object' && !mode.roles.includes(v.user.user_type as UserType)) throw forbidden();
  return state;
}

/** Express handlers for one route: auth, rate limit, validation, handler, JSON answer. */
export function toHandlers(def: AnyRouteDef, app: AppContext): RequestHandler[] {
  const fixedMode = typeof def.auth === 'function' ? null : def.auth;
  const readsBody = BODY_METHODS.has(def.method);
  const middleware = def.middleware?.length ? def.middleware : null;
  const isBridgeSecret = app.config.bridgeSecret ? secretMatcher(app.config.bridgeSecret) : () => false;
  const run: RequestHandler = async (req: Request, res: Response, next: NextFunction) => {
    // The route template, for metrics (never the raw path).
    res.locals.route = def.path;
    const mode = fixedMode ?? (def.auth as (c: Config) => AuthMode)(app.config);
    // Express 5 parses the query string again on every read of req.query: read it once.
    const rawQuery = (req.query ?? {}) as Record<string, unknown>;
    const { token, source } = readSessionToken(req, rawQuery);
    const seen = { token, tokenSource: source, bridge: isBridgeSecret(req.headers['x-bridge-secret']) };
    // Only where a cookie session authenticates the call; a bridge secret cannot be forged cross-site.
    if (mode !== 'public' && mode !== 'bridge' && mode !== 'bridge+session') assertSameOrigin(req, seen, app.config);
    const resolved = resolveAuth(req, seen, mode, app);
    const auth = resolved instanceof Promise ? await resolved : resolved;
    res.locals.auth = auth;
    if (middleware) {
      for (const mw of middleware) {
        await new Promise<void>((resolve, reject) => mw(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
        if (res.headersSent) return;
      }
    }
    const { body, query, params } = parseInput(def, req, rawQuery, readsBody && !middleware);
    // The mode was enforced above, so the narrowed type holds. Events the handler writes, however
    // deep, name this request as their source (src/audit/audit-scope.ts).
    const result = await withAuditScope(requestAuditScope(req, auth.user), () => def.handler({ req, res, body, query, params, auth: auth, app }));
    if (!res.headersSent && result !== undefined) sendJson(res, 200, result);
    else if (!res.headersSent) next();
  };
  return def.rateLimit === false ? [run] : [rateLimitFor(def.rateLimit, app), run];
}

/**
 * The route's input, checked and parsed; a refusal here is marked as raised before any credential was
 * looked at, so it does not spend a login or registration budget (credential-limits.ts).
 */
function parseInput(def: AnyRouteDef, req: Request, rawQuery: Record<string, unknown>, jsonOnly: boolean) {
  try {
    // A body must be JSON even where the route reads none: form and text posts (the cross-site kinds) are refused.
    if (jsonOnly && hasBody(req) && !readAsJson(req) && !req.is(JSON_TYPES)) {
      throw new AppError(415, Codes.UNSUPPORTED_MEDIA_TYPE, 'Content-Type must be application/json');
    }
    if (nestsDeeperThan(req.body, MAX_BODY_DEPTH)) {
      throw badRequest(`Body must not nest deeper than ${MAX_BODY_DEPTH} levels`, [{ field: null, message: 'nested too deeply' }]);
    }
    refuseNul(req.body);
    refuseNul(rawQuery);
    refuseNul(req.params);
    return {
      body: def.body ? parseWith(def.body, req.body ?? {}) : undefined,
      query: parseWith(def.query, rawQuery),
      params: parseWith(def.params, req.params ?? {}),
    };
  } catch (err) {
    throw refusedBeforeCredentials(err);
  }
}

function refuseNul(input: unknown): void {
  const at = nulPath(input);
  if (at !== null) throw badRequest(`${at || 'input'}: must not contain NUL characters`, [{ field: at || null, message: 'must not contain NUL characters' }]);
}

const hasBody = (req: Request) => Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/** `value` parsed by `schema` (400 VALIDATION_ERROR with `details` when it fails); `value` as it is without one. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown): T;
export function parseWith(schema: z.ZodType | undefined, value: unknown): unknown;
export function parseWith(schema: z.ZodType | undefined, value: unknown): unknown {
  if (!schema) return value;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidInput(parsed.error);
  return parsed.data;
}
