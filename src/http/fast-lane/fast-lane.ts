import type { IncomingHttpHeaders, IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler, Response } from 'express';
import type { AppContext } from '../../app-context.js';
import type { LimitResult, LimitRule } from '../../limits/rate-limiter.js';
import { limitClassesOf, type RateLimitClass } from '../../limits/limit-classes.js';
import { consumeFailingOpen } from '../../limits/fail-open.js';
import { checkBridgeContext } from '../../services/bridge-checks.js';
import { nestsDeeperThan, nulPath } from '../../services/security/json-depth.js';
import type { LocalHit } from '../../services/session-service.js';
import { MAX_BODY_DEPTH, type AnyRouteDef } from '../define-route.js';
import { laneBudget, LANE_DEFS, PLAIN_HEADERS } from './lane-routes.js';
import { readSessionToken } from '../request-context.js';
import { JsonText } from '../respond.js';
import { activeAnswers, bridgeContextOf, bridgeSessionToken, postedSessionToken } from '../routes/session.routes.js';
import type { BridgeValidateBody, SessionIdBody } from '../schemas/auth.schemas.js';
import { corsAllows, CORS_EXPOSE_HEADERS } from '../middleware/cors.js';
import { parseBody, parseSize, plainJsonLength, presetBody, readRaw } from '../middleware/json-body.js';
import { accessLine, markStarted } from '../middleware/access-log.js';
import { BRIDGE_SECRET_HEADER, bridgeKeyOf } from '../middleware/rate-limit-classes.js';
import { clientIpOutside, ipLimitKey } from '../middleware/client-ip.js';
import { limitHeaderPairs, recordCounted, tooManyText } from '../middleware/rate-limit-request.js';
import { requestIdOf } from '../middleware/request-id.js';
import { apiSecurityHeaders } from '../middleware/security-headers.js';

/*
 * The validation fast lane (docs/architecture.md, "Request flow"). The validation reads are what every
 * app behind Gatehouse sends for every request it serves; on a warm cache their work is a hash and two
 * Map reads, and nearly all of their cost was the framework around it. This listener sits in front of
 * the Express app and answers the cache hits of those routes itself, with the same bytes; everything
 * else, and every request it has any doubt about, goes to the app untouched.
 *
 * It answers only: GET /auth/validation, POST /auth/validation, POST /auth/bridge/validate and the
 * current-user reads GET /auth/me and GET /auth/user/me (the latter with the bridge secret), at that
 * exact path (no trailing slash), with no query string or `?session_id=` alone (as flowfull-node's
 * bridge validator sends the session; in a token's own characters, nothing to unescape), with only
 * the headers listed in PLAIN_HEADERS (lane-routes.ts), a plain JSON body or none at all (POST), a token whose session
 * and user are both in this process's memory, active, unexpired and allowed to sign in, a valid
 * bridge secret (bridge), a body the route's schema accepts, a client context that passes the bridge
 * checks, and (limits on) a request the gate would count per session or per bridge secret. Its 200
 * is the route's own answer text (activeAnswers); its headers are those the app's middleware sets, in
 * the same order; a budget's refusal is the gate's 429. Its access lines are the middleware's
 * (accessLine): a slow answer, a client gone before the answer, and at LOG_LEVEL debug every answer;
 * its refusals, like the app's, are counted in the refusal log (app.refusals), a line per client
 * address and class per minute, never a line each.
 *
 * With limits on it also counts, before reading the body, the requests to these routes that it never
 * answers but whose budget the headers alone give (handOffBudget: a wrong bridge secret, or no session
 * token at all, both per address), so that a flood of them is refused here, with the gate's 429, at the
 * lane's cost rather than Express's; an admitted one goes to the app counted (recordCounted).
 *
 * What it knows of these routes comes from their definitions (lane-routes.ts: method, path, auth mode, body
 * schema, budget rule; session.routes.ts: where each takes its token), never from a copy; what it hands on
 * runs their compiled pipeline (src/http/route-pipeline.ts).
 */

const enum Route {
  Get,
  Post,
  Bridge,
  /** GET /auth/me, the legacy current user (a session or a pending one). */
  Me,
  /** GET /auth/user/me, the current user with the bridge secret and a session. */
  UserMe,
}

/** The route template of each, as the metrics name it. */
const TEMPLATE = LANE_DEFS.map((d) => d.path);

/** The routes read with GET: no body, and the token as the app reads it (header, query, cookie). */
const GET = LANE_DEFS.map((d) => d.method === 'get');
const isGet = (r: Route) => GET[r];

/** The routes by `METHOD path`, as the request line names them. */
const ROUTES = new Map<string, Route>(LANE_DEFS.map((d, i) => [`${d.method.toUpperCase()} ${d.path}`, i]));

/** The budget rule all five count in (validationRead's): the lane counts a request only where the gate would. */
const BUDGET = laneBudget();

const JSON_TYPE = 'application/json; charset=utf-8';

function routeOf(req: IncomingMessage): Route | null {
  // A request of an http.Server always has its url (the parser sets it); the fallback routes nothing.
  const { method, url = '' } = req;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return ROUTES.get(`${method} ${path}`) ?? null;
}

/** The query a lane answer can have: `?session_id=` and a token in characters no parser changes (no escapes, `+` or `&`). */
const SESSION_QUERY = /\?session_id=([\w.~-]+)$/;

/** A query as the app's simple parser reads it: {} for none, the session id alone; null for any other (then the app answers). */
const NO_QUERY: Query = Object.freeze({});
function queryOf(url: string): Query | null {
  const q = url.indexOf('?');
  if (q < 0) return NO_QUERY;
  const m = SESSION_QUERY.exec(url);
  return m && m.index === q ? { session_id: m[1] } : null;
}

function plainHeaders(raw: string[], route: Route): boolean {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (!PLAIN_HEADERS.has(name)) return false;
    // A GET with a body is read by the app (json-body): not the lane's to answer.
    if (isGet(route) && (name === 'content-length' || name === 'content-type')) return false;
  }
  return true;
}

/**
 * A POST without a body that no reader takes, so the route reads {}: no Content-Length (and no
 * Transfer-Encoding, not a plain header) whatever its Content-Type, or Content-Length 0 with no
 * Content-Type (curl -X POST, clients sending the session in a header only). A length of 0 with a type
 * goes through plainJsonLength: express.json refuses some types' charsets even for an empty body.
 */
function noBody(h: IncomingHttpHeaders): boolean {
  const length = h['content-length'];
  return length === undefined || (length === '0' && h['content-type'] === undefined);
}

/** What a middleware sets on every answer, in its order (it must call next at once and read nothing). */
function headersSetBy(mw: RequestHandler): string[] {
  const set = new Map<string, string>();
  const recorder = {
    setHeader(name: string, value: unknown) {
      if (typeof value !== 'string' && typeof value !== 'number') throw new Error(`fast lane: header ${name} is not a single value`);
      set.delete(name);
      set.set(name, String(value));
    },
    removeHeader(name: string) {
      set.delete(name);
    },
  };
  let called = false;
  // The recorder has the two methods a header-setting middleware calls; a missing one would throw here, at start.
  mw({ headers: {} } as Request, recorder as unknown as Response, () => {
    called = true;
  });
  if (!called) throw new Error('fast lane: the header middleware did not complete synchronously');
  return [...set].flat();
}

type Query = Readonly<Record<string, string>>;

/** A request the lane answers: which route, the token the answer is for, and its hit. */
interface Answerable {
  route: Route;
  token: string;
  hit: LocalHit;
}

/** Whether the lane is on for this app (FAST_LANE). */
export function fastLaneEnabled(app: Pick<AppContext, 'config'>): boolean {
  return app.config.fastLane;
}

/** What the lane did (tests and benchmarks read it): answers it gave, requests to its routes it handed to the app. */
export interface FastLaneStats {
  answered: number;
  handedOff: number;
}

/** `handler` (the Express app) with the fast lane in front of it, or `handler` itself when the lane is off. */
export function withFastLane(app: AppContext, handler: RequestListener, stats?: FastLaneStats): RequestListener {
  if (!fastLaneEnabled(app)) return handler;
  const { config, metrics } = app;
  const sessions = app.services.sessions;
  const security = headersSetBy(apiSecurityHeaders());
  const corsOk = corsAllows(config.corsOrigins);
  const bridgeKey = bridgeKeyOf(config);
  const maxBytes = parseSize(config.bodyLimit);
  const limitsOn = config.rateLimitsEnabled;
  const access = accessLine(app.logger, config.accessLogSlowMs);
  // Refusals are counted where the access lines would have been written (info and below).
  const refusals = access ? app.refusals : null;
  const addressOf = clientIpOutside(handler);

  const SECRET_OK = Symbol('fast lane: bridge secret matches');
  /** Whether the request carries the right bridge secret, compared once per request. */
  function secretMatches(req: IncomingMessage): boolean {
    const r = req as IncomingMessage & { [SECRET_OK]?: boolean };
    return (r[SECRET_OK] ??= bridgeKey?.matches(req.headers[BRIDGE_SECRET_HEADER]) ?? false);
  }

  /** The routes only the right bridge secret reaches (resolve checks it once per request): by their auth mode. */
  const SECRET = LANE_DEFS.map((d: AnyRouteDef) => {
    const mode = typeof d.auth === 'function' ? d.auth(config) : d.auth;
    return mode === 'bridge' || mode === 'bridge+session';
  });
  const needsSecret = (r: Route) => SECRET[r];

  /** What the request's bridge-secret header says for the budget (BUDGET.bySecret), compared once per request. */
  const bySecret = (req: IncomingMessage) => BUDGET.bySecret(req.headers[BRIDGE_SECRET_HEADER], bridgeKey ? () => secretMatches(req) : null);

  /** The hit the request's answer is for, or null (then the app answers). Changes nothing. */
  function resolve(req: IncomingMessage, route: Route, query: Query, body: unknown): Answerable | null {
    if (needsSecret(route) && !secretMatches(req)) return null;
    // Where each route takes its token: the request's (readSessionToken, as the pipeline reads it), or the routes' own readers.
    let token: string | null;
    if (isGet(route)) token = readSessionToken(req as Request, query).token;
    else if (route === Route.Post) token = postedSessionToken(body as SessionIdBody, readSessionToken(req as Request, query).token);
    else token = bridgeSessionToken(query, body as BridgeValidateBody, req.headers['x-session-id'] as string | undefined);
    const hit = sessions.peekLocal(token);
    if (!hit || !token) return null;
    if (route === Route.Bridge) {
      try {
        checkBridgeContext(hit.session, bridgeContextOf(config, body as BridgeValidateBody));
      } catch {
        return null;
      }
    }
    return { route, token, hit };
  }

  /** The budget the gate would count this request in, when it is one the lane can count (else null). */
  function budgetOf(req: IncomingMessage, query: Query, a: Answerable): { cls: RateLimitClass; key: string } | null {
    const secret = bySecret(req);
    // A route that needs the secret is only answerable with the right one (resolve checked it).
    if (secret === 'secret' && bridgeKey) return { cls: BUDGET.secretClass, key: bridgeKey.key };
    if (secret !== null) return null;
    // The gate keys by the session of the header, query or cookie token (never the body's): for GET that is the answer's own.
    if (isGet(a.route)) return { cls: BUDGET.sessionClass, key: `session:${a.hit.session.id}` };
    const token = readSessionToken(req as Request, query).token;
    const hit = token === a.token ? a.hit : sessions.peekLocal(token);
    return hit ? { cls: BUDGET.sessionClass, key: `session:${hit.session.id}` } : null;
  }

  /**
   * The budget the gate would count a request in that the lane never answers, when its headers alone
   * say which (the routes' budget rule, rate-limit-classes.ts): a wrong bridge secret is
   * `bridge-invalid`, no secret and no session token in header, query or cookie is `default`, both per
   * client address. Null for the rest (a token that may or may not be live: the app looks it up).
   * These are the floods of guessed secrets and of bare requests: refused here at the lane's cost
   * rather than the app's, with the gate's answer (issue 52).
   */
  function handOffBudget(req: IncomingMessage, query: Query): { cls: RateLimitClass; key: string } | null {
    const secret = bySecret(req);
    if (secret === 'wrong-secret') return { cls: BUDGET.wrongSecretClass, key: ipLimitKey(addressOf(req)) };
    if (secret === 'secret' || readSessionToken(req as Request, query).token) return null;
    return { cls: BUDGET.otherwiseClass, key: ipLimitKey(addressOf(req)) };
  }

  /** Counts a request the lane will not answer where the gate would (handOffBudget): refused here, else handed to the app counted. */
  function countForApp(req: IncomingMessage, res: ServerResponse, route: Route, b: { cls: RateLimitClass; key: string }, started: number): void {
    const { rule } = limitClassesOf(config, app.modules.registry?.() ?? []).get(b.cls);
    const then = (r: LimitResult): void => {
      if (!r.allowed) return refuse(req, res, route, b.cls, r, started);
      // Counted: the app must not count it again (its gate sets the headers).
      recordCounted(req, b.cls, b.key, r);
      handOff(req, res, null, started);
    };
    const counted = countNow(b.cls, b.key, rule);
    if (counted) return then(counted);
    consumeFailingOpen(app, b.cls, b.key, rule).then(then, () => handOff(req, res, null, started));
  }

  // X-Request-ID (its value set per answer) and the security headers: copied, not built, per answer.
  const baseHead = ['X-Request-ID', '', ...security];

  /** The headers the app's middleware would set, in its order, up to the route's own. */
  function headBlock(req: IncomingMessage, r: LimitResult | null): string[] {
    const out = baseHead.slice();
    out[1] = requestIdOf(req.headers['x-request-id']);
    const origin = req.headers.origin;
    if (corsOk(origin)) {
      out.push(
        'Access-Control-Allow-Origin',
        origin,
        'Access-Control-Allow-Credentials',
        'true',
        'Vary',
        'Origin',
        'Access-Control-Expose-Headers',
        CORS_EXPOSE_HEADERS,
      );
    }
    return r ? limitHeaderPairs(r, out) : out;
  }

  function send(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    status: number,
    head: string[],
    body: JsonText,
    started: number,
    refusedIn?: RateLimitClass,
  ): void {
    // A client gone while the lane waited on the limiter: the middleware's line says so, with the status then.
    const aborted = res.destroyed;
    const statusThen = res.statusCode;
    head.push('Content-Type', JSON_TYPE, 'Content-Length', body.contentLength);
    res.writeHead(status, head);
    res.end(body.text);
    if (stats) stats.answered += 1;
    const ms = performance.now() - started;
    metrics.httpRequest(req.method ?? '', TEMPLATE[route], status, ms / 1000);
    if (refusedIn !== undefined) refusals?.refused(addressOf(req), refusedIn);
    else if (access) access(req, head[1], aborted ? statusThen : status, ms, aborted);
  }

  function answer(req: IncomingMessage, res: ServerResponse, a: Answerable, r: LimitResult | null, started: number): void {
    const v = sessions.useLocal(a.hit);
    let text: JsonText;
    if (a.route === Route.Get) text = activeAnswers.get(app, v);
    else if (a.route === Route.Post) text = activeAnswers.post(app, v, a.token);
    else if (a.route === Route.Bridge) text = activeAnswers.bridge(app, v);
    else if (a.route === Route.Me) text = activeAnswers.me(app, v);
    else text = activeAnswers.userMe(app, v, a.token);
    send(req, res, a.route, 200, headBlock(req, r), text, started);
  }

  /** The limiter's answer when it has one without waiting; null otherwise (and for a throw: the wait path fails open). */
  function countNow(cls: RateLimitClass, key: string, rule: LimitRule): LimitResult | null {
    try {
      return app.limiter.consumeNow?.(cls, key, rule) ?? null;
    } catch {
      return null;
    }
  }

  function refuse(req: IncomingMessage, res: ServerResponse, route: Route, cls: RateLimitClass, r: LimitResult, started: number): void {
    metrics.rateLimited(cls);
    send(req, res, route, 429, headBlock(req, r), tooManyText(r), started, cls);
  }

  /** Gives the request to the app; a body already read goes with it, and when it began (its access line's time). */
  function handOff(req: IncomingMessage, res: ServerResponse, raw: Buffer | Error | null, started?: number): void {
    if (raw) presetBody(req, raw);
    if (started !== undefined) markStarted(req, started);
    if (stats) stats.handedOff += 1;
    handler(req, res);
  }

  function proceed(req: IncomingMessage, res: ServerResponse, route: Route, query: Query, raw: Buffer | null, started: number): void {
    let body: unknown;
    if (!isGet(route)) {
      let parsed: unknown;
      try {
        parsed = parseBody(raw);
      } catch {
        return handOff(req, res, raw, started);
      }
      if (nestsDeeperThan(parsed, MAX_BODY_DEPTH) || nulPath(parsed) !== null) return handOff(req, res, raw, started);
      const schema = LANE_DEFS[route].body;
      const checked = schema?.safeParse(parsed);
      if (!checked?.success) return handOff(req, res, raw, started);
      body = checked.data;
    }
    const a = resolve(req, route, query, body);
    if (!a) return handOff(req, res, raw, started);
    if (!limitsOn) return answer(req, res, a, null, started);
    const budget = budgetOf(req, query, a);
    if (!budget) return handOff(req, res, raw, started);
    const { rule } = limitClassesOf(config, app.modules.registry?.() ?? []).get(budget.cls);
    // Counted in process (or from a lease held): answered in this tick, so the hit found is still the one.
    const counted = countNow(budget.cls, budget.key, rule);
    if (counted) return counted.allowed ? answer(req, res, a, counted, started) : refuse(req, res, route, budget.cls, counted, started);
    consumeFailingOpen(app, budget.cls, budget.key, rule).then(
      (r) => {
        if (!r.allowed) return refuse(req, res, route, budget.cls, r, started);
        // The session may have changed during the wait (revoked by another instance): look again.
        const now = resolve(req, route, query, body);
        if (now) return answer(req, res, now, r, started);
        // Counted already: the app must not count it again (its gate sets the headers).
        recordCounted(req, budget.cls, budget.key, r);
        handOff(req, res, raw, started);
      },
      () => handOff(req, res, raw, started),
    );
  }

  return (req, res) => {
    const route = routeOf(req);
    if (route === null) return handler(req, res);
    if (!plainHeaders(req.rawHeaders, route)) return handOff(req, res, null);
    const started = performance.now();
    const query = queryOf(req.url ?? '');
    if (query === null) return handOff(req, res, null);
    if (limitsOn) {
      // Before the body is read, as the gate would.
      const early = handOffBudget(req, query);
      if (early) return countForApp(req, res, route, early, started);
    }
    if (isGet(route)) return proceed(req, res, route, query, null, started);
    if (noBody(req.headers)) return proceed(req, res, route, query, null, started);
    const length = plainJsonLength(req.headers);
    if (length === null || length > maxBytes) return handOff(req, res, null);
    if (length === 0) return proceed(req, res, route, query, null, started);
    readRaw(req, length, (err, raw) => (err ? handOff(req, res, err, started) : proceed(req, res, route, query, raw, started)));
  };
}
