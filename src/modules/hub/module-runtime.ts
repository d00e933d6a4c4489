import type { RequestHandler } from 'express';
import type { AppContext } from '../../app-context.js';
import type { ModuleRuntime } from '../runtime.js';

/**
 * Module runtime over the module_state table. Until the registry of modules/ is wired in, no module
 * can be installed, so the runtime answers "nothing installed" and routes nothing.
 */
export async function createModuleRuntime(_ctx: AppContext): Promise<ModuleRuntime> {
  const router: RequestHandler = (_req, _res, next) => next();
  return {
    installedSources: () => [],
    isInstalled: () => false,
    isEnabled: () => false,
    userFields: () => [],
    router,
    async reload() {},
    async close() {},
  };
}
