import express, { type Request, type RequestHandler } from 'express';
import { sequence } from './sequence.js';

const DISPATCHED = Symbol('dispatchedByExactRoutes');

const SPECIAL = /[:*?(){}]/;
const escape = (s: string) => s.replace(/[.+^$|[\]\\/-]/g, '\\$&');

/**
 * What a route pattern matches, as Express does (case-insensitive, an optional trailing slash).
 * `:name` is one segment; anything fancier (wildcards, optional parts) matches everything below its
 * static prefix: conservative, so a literal it might shadow is left to the router.
 */
function patternOf(path: string): RegExp {
  const fancy = /[*?(){}]/.exec(path);
  const head = fancy ? path.slice(0, fancy.index) : path;
  const body = head
    .split(/(:[A-Za-z0-9_]+)/)
    .map((part) => (part.startsWith(':') ? '[^/]+' : escape(part)))
    .join('');
  return new RegExp(`^${body}${fancy ? '.*' : '/?'}$`, 'i');
}

/**
 * The one compiled route table: parameter-free routes by `METHOD /exact/path`, for a lookup before
 * any routing (dispatch here, classification in the rate-limit gate). Express tries routes in order,
 * so a literal path that an earlier route's pattern also matches (`GET /x/:id` before `GET /x/me`)
 * stays out of the table, and the router gives it to the earlier route; the first of two equal keys wins.
 */
export function exactRouteTable<R extends { method: string; path: string }>(routes: Iterable<R>): Map<string, R> {
  const table = new Map<string, R>();
  const patterns: { method: string; re: RegExp }[] = [];
  for (const r of routes) {
    const method = r.method.toUpperCase();
    if (SPECIAL.test(r.path)) {
      patterns.push({ method, re: patternOf(r.path) });
      continue;
    }
    const key = `${method} ${r.path}`;
    if (table.has(key) || patterns.some((p) => p.method === method && p.re.test(r.path))) continue;
    table.set(key, r);
  }
  return table;
}

/**
 * Routes without path parameters looked up by method and exact path in one Map, ahead of the Express
 * router, which otherwise tests every route's pattern in turn. Anything that is not an exact match
 * (params, a trailing slash, other letter case, HEAD) still goes through the router, so routing rules
 * do not change; a request dispatched here is never routed a second time.
 */
export function createCoreRouter(routes: { method: string; path: string; handlers: RequestHandler[] }[]): RequestHandler[] {
  const router = express.Router();
  // Route definitions name one of these methods (defineRoute's `method`); each is the router's same matcher.
  for (const r of routes) router[r.method as 'get' | 'post' | 'put' | 'patch' | 'delete'](r.path, ...r.handlers);
  const table = new Map([...exactRouteTable(routes)].map(([key, r]) => [key, sequence(r.handlers)]));

  const exact: RequestHandler = (req, res, next) => {
    const chain = table.get(`${req.method} ${req.path}`);
    if (!chain) return next();
    (req as Request & { [DISPATCHED]?: boolean })[DISPATCHED] = true;
    chain(req, res, next);
  };

  const rest: RequestHandler = (req, res, next) => ((req as Request & { [DISPATCHED]?: boolean })[DISPATCHED] ? next() : router(req, res, next));

  return [exact, rest];
}
