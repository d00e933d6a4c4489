import type { RouteShape } from './define-route.js';

export type Routes = readonly RouteShape[];

/** What a view of the registry's routes reads: the module registry. */
export interface RegistryRoutesDeps {
  modules: { registry?(): readonly { routes: Routes }[] };
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
    const sets = (app.modules.registry?.() ?? []).map((m) => m.routes);
    if (sets.length !== moduleRouteSets.length || sets.some((s, i) => s !== moduleRouteSets[i])) {
      moduleRouteSets = sets;
      built = build([coreRoutes, ...sets]);
    }
    return built;
  };
}
