import type { Request, Response } from 'express';
import type { AppContext } from '../app-context.js';
import { compiledModuleRoute } from '../http/module-router.js';
import type { RouteInput } from '../http/route-pipeline.js';
import type { ModuleContext } from '../modules/module-context.js';
import type { AnyModuleRouteDef } from '../modules/module-route.js';
import type { PageSession } from './page-auth.js';

/** A module's API route and the context its handler runs with. */
export interface ServedModuleRoute {
  def: AnyModuleRouteDef;
  ctx: ModuleContext;
}

/**
 * The API route an installed, switched-on module serves at `METHOD path`, with its context; null when
 * none does. The pages find a module's feature by its API (the passkeys' and two-factor routes), never
 * by the module's name, and call that route's own handler (the same code as the API answer).
 */
export function enabledModuleRoute(app: AppContext, method: AnyModuleRouteDef['method'], path: string): ServedModuleRoute | null {
  for (const m of app.modules.routes()?.installed ?? []) {
    if (!m.enabled) continue;
    const def = m.manifest.routes.find((r) => r.method === method && r.path === path);
    if (def) return { def, ctx: m.context };
  }
  return null;
}

/** What a page hands a module route: the path's parameters, the query and the body, before the route's schemas. */
export type ModuleRouteInput = RouteInput;

/**
 * The one in-process call of a module's API route from a page (the account page, the sign-in step, the
 * console), as the API would answer it for this browser's session: the route's compiled pipeline
 * (src/http/route-pipeline.ts), the very one its API path runs. So a pending two-factor session only where
 * the route takes one (`session-or-pending`, else 401), its `{ roles }` rule (403), its rate-limit class
 * counted as the gate counts it (429 `tooManyRequests`), its own middleware, its params, query and body
 * parsed with its own schemas (400 `invalidInput`), the session as `auth`, and an audit scope whose actor
 * is the session's user. A backend's route (`bridge`, `bridge+session`) is refused with 403: a browser's
 * page never holds the bridge secret (issue 61). Answers what the handler returned (`{}` for nothing).
 */
export async function runModuleRoute(
  app: AppContext,
  req: Request,
  res: Response,
  s: PageSession,
  route: ServedModuleRoute,
  input: ModuleRouteInput = {},
): Promise<Record<string, unknown>> {
  const out = await compiledModuleRoute(app, route.def, route.ctx).call(req, res, { token: s.token }, input);
  return (out ?? {}) as Record<string, unknown>;
}

/** `runModuleRoute` for the route an enabled module serves at `METHOD path`; null when none does. */
export async function callModuleRoute(
  app: AppContext,
  req: Request,
  res: Response,
  s: PageSession,
  method: AnyModuleRouteDef['method'],
  path: string,
  input: ModuleRouteInput = {},
): Promise<Record<string, unknown> | null> {
  const route = enabledModuleRoute(app, method, path);
  return route ? runModuleRoute(app, req, res, s, route, input) : null;
}
