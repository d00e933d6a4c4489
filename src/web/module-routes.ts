import type { AppContext } from '../app-context.js';
import type { ModuleContext } from '../modules/module-context.js';
import type { AnyModuleRouteDef } from '../modules/module-route.js';

/**
 * The API route an installed, switched-on module serves at `METHOD path`, with its context; null when
 * none does. The pages find a module's feature by its API (the passkeys' and two-factor routes), never
 * by the module's name, and call that route's own handler (the same code as the API answer).
 */
export function enabledModuleRoute(app: AppContext, method: AnyModuleRouteDef['method'], path: string): { def: AnyModuleRouteDef; ctx: ModuleContext } | null {
  for (const m of app.modules.routes()?.installed ?? []) {
    if (!m.enabled) continue;
    const def = m.manifest.routes.find((r) => r.method === method && r.path === path);
    if (def) return { def, ctx: m.context };
  }
  return null;
}
