import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AppContext } from '../app-context.js';
import { withAuditScope } from '../audit/audit-scope.js';
import type { Config } from '../config/schema.js';
import { AppError, badRequest, forbidden, unauthorized } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import { nestsDeeperThan, nulPath } from '../services/security/json-depth.js';
import { secretMatcher } from '../services/security/tokens.js';
import { MAX_BODY_DEPTH, parseWith, requireBridge, type AnyRouteDef, type AuthMode, type UserType } from './define-route.js';
import { refusedBeforeCredentials } from './middleware/credential-limits.js';
import { markUser } from './middleware/access-log.js';
import { assertSameOrigin } from './middleware/csrf.js';
import { readAsJson } from './middleware/json-body.js';
import { refuse, routeLimiter, type RouteLimit } from './middleware/rate-limit.js';
import { tooManyRequests } from './middleware/rate-limit-request.js';
import { BRIDGE_SECRET_HEADER } from './middleware/rate-limit-classes.js';
import { requestAuditScope } from './request-audit.js';
import { readSessionToken, type AuthState } from './request-context.js';
import { routeLimitOf } from './route-shape.js';
import { sendJson } from './respond.js';

/*
 * The one pipeline a route definition compiles to (issue 61). Every way into a route runs it:
 * - Express (core routes, module routes: `handlers`), which is also where every request the validation
 *   fast lane does not answer itself goes (src/http/fast-lane);
 * - a hosted page calling an API route in process (`call`, through src/web/module-routes.ts).
 * Its stages, in order: the limit class (counted once per request and class), who may call (auth mode,
 * pending sessions, roles, the bridge secret; the CSRF check for cookie sessions on the API), the route's
 * own middleware, the input (depth, NUL, the route's schemas), the handler in an audit scope naming the
 * caller. The two entries differ only in where the input comes from: the HTTP request, or the page.
 */

/** What a page hands an API route: the path's parameters, the query and the body, before the route's schemas. */
export interface RouteInput {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
}

/** A page's caller: its browser's session token (the cookie's; never a bridge secret). */
export interface PageCaller {
  token: string;
}

export interface CompiledRoute {
  readonly def: AnyRouteDef;
  /** Who may call it, as configured now (a route may decide its mode from configuration). */
  mode(): AuthMode;
  /** The limit class it counts in: its own, `default` without one, false for a probe. */
  readonly limit: RouteLimit | false;
  /** The Express handlers: the limit, then the rest of the pipeline and the JSON answer. */
  readonly handlers: RequestHandler[];
  /**
   * The route called in process by a hosted page, as the API would answer this browser's session: the
   * same stages, the input given by the page. Answers what the handler returned; throws what the API
   * would answer as an error (429 with the limit headers set, 401, 403, 400).
   */
  call(req: Request, res: Response, caller: PageCaller, input?: RouteInput): Promise<unknown>;
}

const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);
const JSON_TYPES = ['application/json', 'application/*+json'];

/** The mode's session rules: whether it needs a session, a pending one will do, or roles are named. */
const needsBridge = (mode: AuthMode) => mode === 'bridge' || mode === 'bridge+session';

/** What a request carries for the auth stage, read once: the token, where from, whether the bridge secret is right. */
type Seen = Pick<AuthState, 'token' | 'tokenSource' | 'bridge'>;

/**
 * Who is calling, by the route's mode. Answers without a promise where no session is looked up
 * (public and bridge-only routes).
 */
function resolveAuth(req: Request, seen: Seen, mode: AuthMode, app: AppContext): AuthState | Promise<AuthState> {
  const state: AuthState = { token: seen.token, tokenSource: seen.tokenSource, bridge: seen.bridge, session: null, user: null };
  if (mode === 'public') return state;
  if (mode === 'optional-session') return state.token ? optionalSession(req, state, app) : state;
  if (needsBridge(mode)) {
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
  // A session waiting for two-factor only where the mode takes one (else 401 TWO_FACTOR_REQUIRED).
  const v = await app.services.sessions.validate(state.token, { allowPending: mode === 'session-or-pending' });
  state.session = v.session;
  state.user = v.user;
  // Named in the access line should the answer be a 401 or 403 (the role check below, or the handler's).
  markUser(req, v.user.id);
  if (typeof mode === 'object' && !mode.roles.includes(v.user.user_type as UserType)) throw forbidden();
  return state;
}

/** Runs the route's own middleware in order; true when one of them wrote the answer itself. */
async function runMiddleware(middleware: readonly RequestHandler[], req: Request, res: Response): Promise<boolean> {
  for (const mw of middleware) {
    await new Promise<void>((resolve, reject) => mw(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
    if (res.headersSent) return true;
  }
  return false;
}

interface RawInput {
  body: unknown;
  query: Record<string, unknown>;
  params: unknown;
}

/**
 * The route's input, checked and parsed; a refusal here is marked as raised before any credential was
 * looked at, so it does not spend a login or registration budget (credential-limits.ts).
 */
function parseInput(def: AnyRouteDef, raw: RawInput, unreadableBody: boolean) {
  try {
    // A body must be JSON even where the route reads none: form and text posts (the cross-site kinds) are refused.
    if (unreadableBody) throw new AppError(415, Codes.UNSUPPORTED_MEDIA_TYPE, 'Content-Type must be application/json');
    if (nestsDeeperThan(raw.body, MAX_BODY_DEPTH)) {
      throw badRequest(`Body must not nest deeper than ${MAX_BODY_DEPTH} levels`, [{ field: null, message: 'nested too deeply' }]);
    }
    refuseNul(raw.body);
    refuseNul(raw.query);
    refuseNul(raw.params);
    return {
      body: def.body ? parseWith(def.body, raw.body ?? {}) : undefined,
      query: parseWith(def.query, raw.query),
      params: parseWith(def.params, raw.params ?? {}),
    };
  } catch (err) {
    throw refusedBeforeCredentials(err);
  }
}

function refuseNul(input: unknown): void {
  const at = nulPath(input);
  if (at !== null) throw badRequest(`${at || 'input'}: must not contain NUL characters`, [{ field: at || null, message: 'must not contain NUL characters' }]);
}

/** What `run` answers when the route's middleware wrote the answer itself. */
const ANSWERED = Symbol('answered by the route middleware');

const hasBody = (req: Request) => Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/** Compiles a route definition (core's, or a module's with its context bound) into its pipeline for this app. */
export function compileRoute(def: AnyRouteDef, app: AppContext): CompiledRoute {
  const fixedMode = typeof def.auth === 'function' ? null : def.auth;
  const mode = (): AuthMode => fixedMode ?? (def.auth as (c: Config) => AuthMode)(app.config);
  const readsBody = BODY_METHODS.has(def.method);
  const middleware = def.middleware?.length ? def.middleware : null;
  const isBridgeSecret = app.config.bridgeSecret ? secretMatcher(app.config.bridgeSecret) : () => false;
  const limit = routeLimitOf(def);
  const limiter = limit === false ? null : routeLimiter(limit, app);

  /**
   * The stages after the limit: auth, middleware, input, handler. The input is the page's, or (null) the
   * HTTP request's, read after the middleware (which may parse the body itself). ANSWERED when the middleware answered.
   */
  async function run(req: Request, res: Response, seen: Seen, m: AuthMode, pageInput: RouteInput | null, rawQuery: Record<string, unknown>) {
    const resolved = resolveAuth(req, seen, m, app);
    const auth = resolved instanceof Promise ? await resolved : resolved;
    res.locals.auth = auth;
    if (middleware && (await runMiddleware(middleware, req, res))) return ANSWERED;
    const { body, query, params } = pageInput
      ? parseInput(def, { body: pageInput.body ?? {}, query: pageInput.query ?? {}, params: pageInput.params ?? {} }, false)
      : parseInput(
          def,
          { body: req.body, query: rawQuery, params: req.params },
          readsBody && !middleware && hasBody(req) && !readAsJson(req) && !req.is(JSON_TYPES),
        );
    // The mode was enforced above, so the narrowed type holds. Events the handler writes, however
    // deep, name this request as their source (src/audit/audit-scope.ts).
    const result: unknown = await withAuditScope(requestAuditScope(req, auth.user), () => def.handler({ req, res, body, query, params, auth, app }));
    return result;
  }

  const viaHttp: RequestHandler = async (req: Request, res: Response, next: NextFunction) => {
    // The route template, for metrics (never the raw path).
    res.locals.route = def.path;
    const m = mode();
    // Express 5 parses the query string again on every read of req.query: read it once.
    const rawQuery = (req.query ?? {}) as Record<string, unknown>;
    const { token, source } = readSessionToken(req, rawQuery);
    const seen: Seen = { token, tokenSource: source, bridge: isBridgeSecret(req.headers[BRIDGE_SECRET_HEADER]) };
    // Only where a cookie session authenticates the call; a bridge secret cannot be forged cross-site.
    if (m !== 'public' && !needsBridge(m)) assertSameOrigin(req, seen, app.config);
    const result = await run(req, res, seen, m, null, rawQuery);
    if (res.headersSent) return;
    if (result !== undefined && result !== ANSWERED) sendJson(res, 200, result);
    else next();
  };

  async function call(req: Request, res: Response, caller: PageCaller, input: RouteInput = {}): Promise<unknown> {
    const m = mode();
    // A page holds no bridge secret: a backend's route is refused, never run without it.
    if (needsBridge(m)) throw forbidden('This route is for backends that hold the bridge secret');
    // Counted as the gate counts it, once per request and class (the page's own post may be counted there already).
    const refused = limiter ? await limiter.check(req, res) : null;
    if (refused) throw tooManyRequests(refused);
    // The page checked its own form's CSRF token: the API's Origin check is for API calls.
    const seen: Seen = { token: caller.token, tokenSource: 'cookie', bridge: false };
    const result = await run(req, res, seen, m, input, {});
    if (result === ANSWERED)
      throw new Error(`${def.method.toUpperCase()} ${def.path}: its middleware answered the request itself; a page cannot render after it`);
    return result;
  }

  const limitHandler: RequestHandler | null =
    limit === false || !limiter
      ? null
      : (req, res, next) => {
          const pending = limiter.check(req, res);
          if (pending === null) return next();
          pending.then((r) => (r ? refuse(app, req, res, r, limit) : next()), next);
        };

  return { def, mode, limit, handlers: limitHandler ? [limitHandler, viaHttp] : [viaHttp], call };
}

/** The Express handlers of a route: its compiled pipeline's. */
export const toHandlers = (def: AnyRouteDef, app: AppContext): RequestHandler[] => compileRoute(def, app).handlers;
