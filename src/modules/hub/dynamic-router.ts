import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import type { AppContext } from '../../app-context.js';
import { AppError, isAppError } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import { toHandlers } from '../../http/define-route.js';
import type { ModuleManifest } from '../define-module.js';
import type { ModuleContext } from '../module-context.js';
import { toCoreRoute } from '../module-route.js';

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
 * A router with the routes of every module in the registry. An installed module's routes run; a
 * switched-off module keeps its paths, answered 503 MODULE_DISABLED; so does a module that is not
 * installed (a client learns the feature is missing, not that the path is wrong), naming the install
 * command. Not-installed modules come last, so they never shadow an installed module's path.
 */
export function buildModuleRouter(
  app: AppContext,
  modules: { manifest: ModuleManifest; enabled: boolean; context: ModuleContext }[],
  notInstalled: readonly ModuleManifest[] = [],
): express.Router {
  const router = express.Router();
  for (const { manifest, enabled, context } of modules) {
    for (const def of manifest.routes) {
      if (enabled) router[def.method](def.path, ...toHandlers(toCoreRoute(def, context), app), switchedOffMeanwhile(app, manifest.id));
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

/**
 * A request can outlive its module: switched off or uninstalled (its tables dropped) while the
 * request ran. What then fails is answered as the switched-off module would be, not as a 500.
 */
function switchedOffMeanwhile(app: AppContext, id: string): ErrorRequestHandler {
  return (err, _req, _res, next) => next(!isAppError(err) && !app.modules.isEnabled(id) ? moduleDisabled(id) : err);
}
