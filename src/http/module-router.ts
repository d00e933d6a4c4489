import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import type { AppContext } from '../app-context.js';
import { AppError, isAppError } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import type { ModuleContext } from '../modules/module-context.js';
import type { AnyModuleRouteDef } from '../modules/module-route.js';
import type { ModuleRoutes } from '../modules/runtime.js';
import type { AnyRouteDef } from './define-route.js';
import { compileRoute, type CompiledRoute } from './route-pipeline.js';

export const moduleDisabled = (id: string) => new AppError(503, Codes.MODULE_DISABLED, `Module ${id} is disabled`);

/** The answer for a registry module that is not installed: the operator learns the command that adds it. */
export const moduleNotInstalled = (id: string) =>
  new AppError(503, Codes.MODULE_DISABLED, `Module ${id} is not installed; install it with: gatehouse module install ${id}`);

const refuse =
  (err: () => AppError): RequestHandler =>
  () => {
    throw err();
  };

/**
 * The module routes, served through the same pipeline as core routes. The router follows the module
 * runtime: it is rebuilt from each new set of module routes a reload produces. A request before any
 * load (a server started without a reload) loads first, then routes.
 */
export function moduleRouter(app: AppContext): RequestHandler {
  let built: { from: ModuleRoutes; router: express.Router } | null = null;
  const current = (): express.Router | null => {
    const routes = app.modules.routes();
    if (!routes) return null;
    if (built?.from !== routes) built = { from: routes, router: buildModuleRouter(app, routes) };
    return built.router;
  };
  return (req, res, next) => {
    const router = current();
    if (router) return router(req, res, next);
    app.modules.reload().then(() => {
      const loaded = current();
      if (loaded) loaded(req, res, next);
      else next();
    }, next);
  };
}

/**
 * A router with the routes of every module in the registry. An installed module's routes run; a
 * switched-off module keeps its paths, answered 503 MODULE_DISABLED; so does a module that is not
 * installed (a client learns the feature is missing, not that the path is wrong), naming the install
 * command. Not-installed modules come last, so they never shadow an installed module's path.
 */
function buildModuleRouter(app: AppContext, { installed, notInstalled }: ModuleRoutes): express.Router {
  const router = express.Router();
  for (const { manifest, enabled, context } of installed) {
    for (const def of manifest.routes) {
      if (enabled) router[def.method](def.path, ...compiledModuleRoute(app, def, context).handlers, switchedOffMeanwhile(app, manifest.id));
      else
        router[def.method](
          def.path,
          refuse(() => moduleDisabled(manifest.id)),
        );
    }
  }
  for (const manifest of notInstalled) {
    for (const def of manifest.routes)
      router[def.method](
        def.path,
        refuse(() => moduleNotInstalled(manifest.id)),
      );
  }
  return router;
}

/** The core route that serves a module route, its handler given the module's context. */
function toCoreRoute(def: AnyModuleRouteDef, ctx: ModuleContext): AnyRouteDef {
  return {
    ...def,
    handler: ({ req, res, body, query, params, auth }) => def.handler({ req, res, body, query, params, auth: auth, ctx }),
  };
}

/** Compiled once per module context (a reload makes new ones) and route: Express and the pages' calls share it. */
const compiled = new WeakMap<ModuleContext, WeakMap<AnyModuleRouteDef, CompiledRoute>>();

/** The pipeline of a module's route in this module context: the one its API path and the pages' in-process calls run. */
export function compiledModuleRoute(app: AppContext, def: AnyModuleRouteDef, ctx: ModuleContext): CompiledRoute {
  let byDef = compiled.get(ctx);
  if (!byDef) compiled.set(ctx, (byDef = new WeakMap()));
  let route = byDef.get(def);
  if (!route) byDef.set(def, (route = compileRoute(toCoreRoute(def, ctx), app)));
  return route;
}

/**
 * A request can outlive its module: switched off or uninstalled (its tables dropped) while the
 * request ran. What then fails is answered as the switched-off module would be, not as a 500.
 */
function switchedOffMeanwhile(app: AppContext, id: string): ErrorRequestHandler {
  return (err, _req, _res, next) => next(!isAppError(err) && !app.modules.isEnabled(id) ? moduleDisabled(id) : err);
}
