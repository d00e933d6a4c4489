import express, { type Request, type RequestHandler } from 'express';

const DISPATCHED = Symbol('dispatchedByExactRoutes');

/**
 * Routes without path parameters looked up by method and exact path in one Map, ahead of the Express
 * router, which otherwise tests every route's pattern in turn. Anything that is not an exact match
 * (params, a trailing slash, other letter case, HEAD) still goes through the router, so routing rules
 * do not change; a request dispatched here is never routed a second time.
 */
export function createCoreRouter(routes: { method: string; path: string; handlers: RequestHandler[] }[]): RequestHandler[] {
  const table = new Map<string, RequestHandler[]>();
  const router = express.Router();
  for (const r of routes) {
    (router as unknown as Record<string, (p: string, ...h: RequestHandler[]) => void>)[r.method](r.path, ...r.handlers);
    if (!/[:*?(){}]/.test(r.path)) table.set(`${r.method.toUpperCase()} ${r.path}`, r.handlers);
  }

  const exact: RequestHandler = (req, res, next) => {
    const chain = table.get(`${req.method} ${req.path}`);
    if (!chain) return next();
    (req as Request & { [DISPATCHED]?: boolean })[DISPATCHED] = true;
    let i = 0;
    const step = (err?: unknown): void => {
      if (err === 'route' || err === 'router') return next();
      if (err !== undefined && err !== null) return next(err);
      const handler = chain[i++];
      if (!handler) return next();
      try {
        const out = handler(req, res, step) as unknown;
        if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).catch(next);
      } catch (e) {
        next(e);
      }
    };
    step();
  };

  const rest: RequestHandler = (req, res, next) =>
    (req as Request & { [DISPATCHED]?: boolean })[DISPATCHED] ? next() : router(req, res, next);

  return [exact, rest];
}
