import express, { type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import type { LimitDeclaring } from '../../limits/limit-classes.js';
import { registryRoutesView, type Routes } from '../registry-routes.js';
import { exactRouteTable } from '../exact-routes.js';
import { routeLimitOf } from '../route-shape.js';
import { consumeRoute, refuse, type RouteLimit, type RouteLimitDeps } from './rate-limit.js';
import { consumeClass, sendTooMany, setPrecountedHeaders, wasCounted } from './rate-limit-request.js';
import { isRefusedBeforeCredentials, recountAsDefault } from './credential-limits.js';

/** What the layers need: counting, classifiers, and the registry (its modules' routes and classes). */
export type RateLimitLayersDeps = RouteLimitDeps & { modules: { registry?(): readonly (LimitDeclaring & { routes: Routes })[] } };

export interface RateLimitLayers {
  /** Before CORS, which answers preflights itself: counts them in default. */
  preflight: RequestHandler;
  /** After CORS (so a 429 is readable cross-origin), before body parsing: counts every other request once. */
  gate: RequestHandler;
  /** Before the 404 handler: safety net for anything the gate let through uncounted. */
  fallback: RequestHandler;
  /** Before the error handler: the same net for error answers. */
  onError: ErrorRequestHandler;
}

const CLASS = Symbol('rateLimitClass');
// false: a probe route, not limited (RouteDef.rateLimit).
type Classified = Request & { [CLASS]?: RouteLimit | false };

/** Classes of parameter-free routes by `METHOD /exact/path` (the compiled route table): one Map lookup before any routing. */
function buildExactClasses(groups: Routes[]): Map<string, RouteLimit | false> {
  return new Map([...exactRouteTable(groups.flat())].map(([key, def]) => [key, routeLimitOf(def)]));
}

/** An express router that only records the class of the route a request would reach. */
function buildClassifier(groups: Routes[]): express.Router {
  const classifier = express.Router();
  for (const routes of groups) {
    for (const def of routes) {
      const cls = routeLimitOf(def);
      classifier[def.method](def.path, (req: Request, res, next) => {
        (req as Classified)[CLASS] = cls;
        // The template for metrics, also when the answer is a 429 from here.
        res.locals.route = def.path;
        next('router');
      });
    }
  }
  return classifier;
}

/**
 * The layers that put every request in exactly one budget and X-RateLimit-* on every answer.
 * The gate matches the request against the core routes and every module route in the registry
 * (installed or not, since the registry can change at run time) with a router of its own, so the
 * path rules are Express's; it counts the request in the matched route's class, or in default for
 * anything else (unknown paths, static files; preflights by `preflight`). `pathClasses` are exact
 * `METHOD /path` classes of what is mounted outside the route table (the OpenID provider's endpoints,
 * handed in by create-app.ts from src/oidc/http-mount.ts). A flood is thus refused before its body
 * is read, and the route's own limiter (its pipeline, route-pipeline.ts) finds its class counted and does nothing.
 */
export function createRateLimitLayers(app: RateLimitLayersDeps, coreRoutes: Routes, pathClasses: ReadonlyMap<string, RouteLimit> = new Map()): RateLimitLayers {
  const current = registryRoutesView(app, coreRoutes, (groups) => ({ router: buildClassifier(groups), exact: buildExactClasses(groups) }));

  const consume =
    (limit: RouteLimit): RequestHandler =>
    (req, res, next) => {
      consumeRoute(app, req, res, limit).then((r) => (r && !r.allowed ? refuse(app, req, res, r, limit) : next()), next);
    };
  const consumeDefault = consume('default');

  const preflight: RequestHandler = (req, res, next) => (req.method === 'OPTIONS' ? consumeDefault(req, res, next) : next());

  const gate: RequestHandler = (req, res, next) => {
    if (!app.config.rateLimitsEnabled) return next();
    if (wasCounted(req)) {
      // Counted by the fast lane before it handed the request on: its headers go here, in the app's order.
      setPrecountedHeaders(req, res);
      return next();
    }
    const { router, exact } = current();
    const known = pathClasses.get(`${req.method} ${req.path}`) ?? exact.get(`${req.method} ${req.path}`);
    if (known === false) return next();
    if (known) {
      res.locals.route = req.path;
      return consume(known)(req, res, next);
    }
    router(req, res, (err?: unknown) => {
      if (err) return next(err);
      const cls = (req as Classified)[CLASS];
      if (cls === false) return next();
      return consume(cls ?? 'default')(req, res, next);
    });
  };

  const fallback: RequestHandler = (req, res, next) => (wasCounted(req) ? next() : consumeDefault(req, res, next));

  const onError: ErrorRequestHandler = (err, req, res, next) => {
    if (res.headersSent) return next(err);
    // Refused for its input before any credential was checked: default's budget, not login's.
    if (isRefusedBeforeCredentials(err) && app.config.rateLimitsEnabled) {
      recountAsDefault(app, req, res).then(
        (r) => (r && !r.allowed ? sendTooMany(res, r) : next(err)),
        () => next(err),
      );
      return;
    }
    if (wasCounted(req)) {
      // An error before the gate ran: the fast lane's count still shows.
      setPrecountedHeaders(req, res);
      return next(err);
    }
    consumeClass(app, req, res, 'default').then(
      (r) => (r && !r.allowed ? sendTooMany(res, r) : next(err)),
      () => next(err),
    );
  };

  return { preflight, gate, fallback, onError };
}
