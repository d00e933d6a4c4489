import type { RouteShape } from './define-route.js';
import { webRouteShapes, type ModuleWeb } from '../modules/module-web.js';

export type Routes = readonly RouteShape[];

/** What a view of the registry's routes reads: the module registry. */
export interface RegistryRoutesDeps {
  modules: { registry?(): readonly { routes: Routes; web?: ModuleWeb }[] };
}

/**
 * Something built from the core routes and every module route in the registry (installed or not,
 * since the registry can change at run time): rebuilt only when the registry hands out different
 * route lists, so a request pays one comparison of a few array references.
 */
export function registryRoutesView<T>(app: RegistryRoutesDeps, coreRoutes: Routes, build: (groups: Routes[]) => T): () => T {
  let moduleRouteSets: Routes[] = [];
  let built = build([coreRoutes]);
  return () => {
    // A module's API routes and its pages' routes (its `web` key: the form posts count where their API twins do).
    const sets = (app.modules.registry?.() ?? []).flatMap((m) => [m.routes, webRouteShapes(m)]);
    if (sets.length !== moduleRouteSets.length || sets.some((s, i) => s !== moduleRouteSets[i])) {
      moduleRouteSets = sets;
      built = build([coreRoutes, ...sets]);
    }
    return built;
  };
}
