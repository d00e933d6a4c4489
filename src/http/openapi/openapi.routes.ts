import type { AppContext } from '../../app-context.js';
import { packageVersion } from '../../version.js';
import { defineRoute } from '../define-route.js';
import { buildOpenApiDocument, type DocumentedRoute } from './openapi-document.js';

/** Core routes and those of the modules installed now, in the order the router tries them. */
export async function servedRoutes(app: AppContext): Promise<DocumentedRoute[]> {
  // Imported here: the route table includes this very route.
  const { coreRoutes } = await import('../routes/index.js');
  const routes: DocumentedRoute[] = coreRoutes.map((def) => ({ def }));
  for (const m of app.modules.registry()) {
    if (!app.modules.isInstalled(m.id)) continue;
    for (const def of m.routes) routes.push({ def, module: { id: m.id, version: m.version, description: m.description, errorCodes: m.errorCodes } });
  }
  return routes;
}

/** The OpenAPI 3.1 document of this server, built from the route table at each request. */
export const openApiDocument = defineRoute({
  method: 'get',
  path: '/openapi.json',
  auth: 'public',
  async handler({ app }) {
    return buildOpenApiDocument(await servedRoutes(app), app.config, packageVersion());
  },
});
