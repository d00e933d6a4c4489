import express, { type Request, type RequestHandler } from 'express';
import type { AppContext } from '../../app-context.js';
import { AppError } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import { registryRoutesView, type Routes } from '../registry-routes.js';
const ALLOWED = Symbol('allowedMethods');
type Marked = Request & { [ALLOWED]?: Set<string> };

/** One `all` layer per distinct path, recording the methods declared on it; Express's own matching decides. */
function buildMatcher(groups: Routes[]): express.Router {
  const byPath = new Map<string, Set<string>>();
  for (const def of groups.flat()) {
    const methods = byPath.get(def.path) ?? new Set<string>();
    methods.add(def.method.toUpperCase());
    // Express answers HEAD with the GET route.
    if (def.method === 'get') methods.add('HEAD');
    byPath.set(def.path, methods);
  }
  const matcher = express.Router();
  for (const [path, methods] of byPath) {
    matcher.all(path, (req, _res, next) => {
      const r = req as Marked;
      for (const m of methods) (r[ALLOWED] ??= new Set()).add(m);
      next();
    });
  }
  return matcher;
}

/**
 * A request that no route answered, on a path that routes exist for with other methods: 405 with
 * `Allow` (what clients and proxies expect), not 404. Mounted just before the 404 handler; it sees the
 * core routes and every module route of the registry (installed or not: those answer 503 themselves).
 */
export function methodNotAllowed(app: AppContext, coreRoutes: Routes): RequestHandler {
  const current = registryRoutesView(app, coreRoutes, buildMatcher);
  return (req, res, next) => {
    // Preflights are CORS's; a plain OPTIONS is answered by Express's routers with Allow already.
    if (req.method === 'OPTIONS') return next();
    current()(req, res, (err?: unknown) => {
      if (err) return next(err);
      const allowed = (req as Marked)[ALLOWED];
      // A route with this method exists but passed the request on: that is a 404, not a 405.
      if (!allowed?.size || allowed.has(req.method)) return next();
      const list = [...allowed].join(', ');
      res.setHeader('Allow', list);
      next(new AppError(405, Codes.METHOD_NOT_ALLOWED, `${req.method} is not allowed here; allowed: ${list}`));
    });
  };
}
