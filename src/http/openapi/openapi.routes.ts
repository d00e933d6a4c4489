import type { AppContext } from '../../app-context.js';
import { packageVersion } from '../../version.js';
import { defineRoute, type AnyRouteDef } from '../define-route.js';
import { buildOpenApiDocument, type DocumentedRoute } from './openapi-document.js';

/** Core routes and those of the modules installed now, in the order the router tries them. */
export function servedRoutes(app: AppContext, coreRoutes: readonly AnyRouteDef[]): DocumentedRoute[] {
  const routes: DocumentedRoute[] = coreRoutes.map((def) => ({ def }));
  for (const m of app.modules.registry()) {
    if (!app.modules.isInstalled(m.id)) continue;
    for (const def of m.routes) routes.push({ def, module: { id: m.id, version: m.version, description: m.description, errorCodes: m.errorCodes } });
  }
  return routes;
}

/**
 * The OpenAPI 3.1 document of this server, built from the route table at each request. The table
 * includes this very route, so it is handed in (routes/index.ts) rather than imported.
 */
export const openApiDocument = (coreRoutes: () => readonly AnyRouteDef[]) =>
  defineRoute({
    method: 'get',
    path: '/openapi.json',
    summary: 'This API description as an OpenAPI 3.1 document',
    auth: 'public',
    handler({ app }) {
      return buildOpenApiDocument(servedRoutes(app, coreRoutes()), app.config, packageVersion());
    },
  });
