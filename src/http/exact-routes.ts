import express, { type Request, type RequestHandler } from 'express';
import { sequence } from './sequence.js';

const DISPATCHED = Symbol('dispatchedByExactRoutes');

/**
 * Routes without path parameters looked up by method and exact path in one Map, ahead of the Express
 * router, which otherwise tests every route's pattern in turn. Anything that is not an exact match
 * (params, a trailing slash, other letter case, HEAD) still goes through the router, so routing rules
 * do not change; a request dispatched here is never routed a second time.
 */
export function createCoreRouter(routes: { method: string; path: string; handlers: RequestHandler[] }[]): RequestHandler[] {
  const table = new Map<string, RequestHandler>();
  const router = express.Router();
  for (const r of routes) {
    (router as unknown as Record<string, (p: string, ...h: RequestHandler[]) => void>)[r.method](r.path, ...r.handlers);
    if (!/[:*?(){}]/.test(r.path)) table.set(`${r.method.toUpperCase()} ${r.path}`, sequence(r.handlers));
  }

  const exact: RequestHandler = (req, res, next) => {
    const chain = table.get(`${req.method} ${req.path}`);
    if (!chain) return next();
    (req as Request & { [DISPATCHED]?: boolean })[DISPATCHED] = true;
    chain(req, res, next);
  };

  const rest: RequestHandler = (req, res, next) =>
    (req as Request & { [DISPATCHED]?: boolean })[DISPATCHED] ? next() : router(req, res, next);

  return [exact, rest];
}
