import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import type { AppContext } from '../../app-context.js';
import { AppError, isAppError } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import { toHandlers } from '../../http/define-route.js';
import type { ModuleManifest } from '../define-module.js';
import type { ModuleContext } from '../module-context.js';
import { toCoreRoute } from '../module-route.js';

export const moduleDisabled = (id: string) => new AppError(503, Codes.MODULE_DISABLED, `Module ${id} is disabled`);

/**
 * A router with the routes of installed modules. A switched-off module keeps its paths, answered
 * 503 MODULE_DISABLED; a module that is not installed has none (404).
 */
export function buildModuleRouter(app: AppContext, modules: { manifest: ModuleManifest; enabled: boolean; context: ModuleContext }[]): express.Router {
  const router = express.Router();
  for (const { manifest, enabled, context } of modules) {
    for (const def of manifest.routes) {
      const off: RequestHandler = () => {
        throw moduleDisabled(manifest.id);
      };
      if (enabled) router[def.method](def.path, ...toHandlers(toCoreRoute(def, context), app), switchedOffMeanwhile(app, manifest.id));
      else router[def.method](def.path, off);
    }
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
