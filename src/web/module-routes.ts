import type { Request, Response } from 'express';
import type { AppContext } from '../app-context.js';
import { withAuditScope } from '../audit/audit-scope.js';
import { forbidden, unauthorized } from '../errors/app-error.js';
import { invalidInput } from '../errors/zod-issues.js';
import { consumeRoute } from '../http/middleware/rate-limit.js';
import { tooManyRequests } from '../http/middleware/rate-limit-request.js';
import { requestAuditScope } from '../http/request-audit.js';
import type { AuthState } from '../http/request-context.js';
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
export interface ModuleRouteInput {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
}

/**
 * The one in-process call of a module's API route from a page (the account page, the sign-in step, the
 * console), as the API would answer it for this browser's session: a pending two-factor session only where
 * the route takes one (`session-or-pending`), its `{ roles }` rule, its rate-limit class counted as the gate
 * counts it (429 `tooManyRequests`), its params, query and body parsed with its own schemas (400
 * `invalidInput`), the session as `auth`, and an audit scope whose actor is the session's user (as
 * `define-route.ts` runs an API handler). Answers what the handler returned (`{}` for nothing).
 */
export async function runModuleRoute(
  app: AppContext,
  req: Request,
  res: Response,
  s: PageSession,
  route: ServedModuleRoute,
  input: ModuleRouteInput = {},
): Promise<Record<string, unknown>> {
  const { def, ctx } = route;
  // What an in-process call cannot honour is refused, never skipped: a backend's route needs the bridge secret,
  // which a browser's page never holds (issue 61), and a route's own middleware runs only in Express's pipeline.
  if (def.auth === 'bridge' || def.auth === 'bridge+session') throw forbidden('This route is for backends that hold the bridge secret');
  if (def.middleware?.length) throw new Error(`${def.method.toUpperCase()} ${def.path} has middleware of its own: a page cannot call it in process`);
  if (s.pending && def.auth !== 'session-or-pending') throw unauthorized('Finish signing in first');
  if (typeof def.auth === 'object' && !def.auth.roles.includes(s.user.user_type)) throw forbidden();
  if (def.rateLimit) {
    const limited = await consumeRoute(app, req, res, def.rateLimit);
    if (limited && !limited.allowed) throw tooManyRequests(limited);
  }
  const parse = (schema: AnyModuleRouteDef['body'], v: unknown): unknown => {
    if (!schema) return v;
    const r = schema.safeParse(v);
    if (!r.success) throw invalidInput(r.error);
    return r.data;
  };
  const params = parse(def.params, input.params ?? {});
  const query = parse(def.query, input.query ?? {});
  const body = parse(def.body, input.body ?? {});
  const auth: AuthState = { token: s.token, tokenSource: 'cookie', session: s.session, user: s.user, bridge: false };
  const out = await withAuditScope(requestAuditScope(req, s.user), () =>
    def.handler({ req, res, params: params as never, query: query as never, body: body as never, auth, ctx }),
  );
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
