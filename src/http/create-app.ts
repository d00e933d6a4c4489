import type { RequestListener } from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import { withFastLane } from './fast-lane/fast-lane.js';
import type { AppContext } from '../app-context.js';
import { toHandlers } from './route-pipeline.js';
import { moduleRouter } from './module-router.js';
import { coreRoutes } from './routes/index.js';
import { createCoreRouter } from './exact-routes.js';
import { sequence } from './sequence.js';
import { servePictures } from './routes/picture.routes.js';
import { PICTURES_URL_PATH } from '../services/picture-service.js';
import { errorHandler, notFoundHandler } from './middleware/errors.js';
import { requestId } from './middleware/request-id.js';
import { accessLog } from './middleware/access-log.js';
import { cors } from './middleware/cors.js';
import { jsonBody } from './middleware/json-body.js';
import { apiSecurityHeaders } from './middleware/security-headers.js';
import { createRateLimitLayers } from './middleware/rate-limit-gate.js';
import { methodNotAllowed } from './middleware/method-not-allowed.js';
import { countRequests } from '../metrics/http-metrics.js';
import { docsPage } from './openapi/docs-page.js';
import { createWebLayer } from '../web/web-router.js';
import { OIDC_LIMIT_CLASSES, oidcRouter } from '../oidc/http-mount.js';

/** The app's request listener: the Express app, with the validation fast lane in front of it when it is on. */
export function createRequestListener(app: AppContext): RequestListener {
  return withFastLane(app, createApp(app));
}

/** Builds the express app (no listen). */
export function createApp(app: AppContext): Express {
  const { config, logger } = app;
  const x = express();
  x.disable('x-powered-by');
  x.set('trust proxy', config.trustProxy);
  x.set('query parser', 'simple');
  // API answers are small and per-user: hashing every body for an ETag costs more than it saves.
  x.set('etag', false);
  // App-wide middleware runs as one layer (see sequence.ts), in this order.
  const front: RequestHandler[] = [requestId, countRequests(app.metrics)];
  // Access lines (middleware/access-log.ts): non-2xx and slow answers at info, every answer at debug;
  // above info nothing is mounted (failures are logged by the error handler whatever the level).
  // Rate-limit refusals are counted in app.refusals instead: a line per client and class per minute.
  const access = accessLog(logger, config.accessLogSlowMs, app.refusals);
  if (access) front.push(access);

  front.push(apiSecurityHeaders());
  // The hosted pages (src/web); its front part only marks page requests so a 429 from the gate is a page.
  const web = createWebLayer(app);
  front.push(web.front);
  // Preflights are counted before CORS answers them; everything else after CORS (a 429 stays
  // readable cross-origin) and before body parsing (a flood is refused unread).
  // The hosted pages' form posts count in their API twins' classes (src/web).
  const limits = createRateLimitLayers(app, [...coreRoutes, ...web.limits], OIDC_LIMIT_CLASSES);
  front.push(limits.preflight, cors(config.corsOrigins), limits.gate);
  // The OpenID provider reads its own (form) bodies: it goes before the JSON parser.
  front.push(oidcRouter(app, web.view));
  front.push(jsonBody(config.bodyLimit));
  const [exactRoutes, routedRoutes] = createCoreRouter(coreRoutes.map((def) => ({ method: def.method, path: def.path, handlers: toHandlers(def, app) })));
  // Parameter-free core routes are answered from here; none of them lies under the pictures path.
  front.push(exactRoutes);
  x.use(sequence(front));

  x.use(PICTURES_URL_PATH, servePictures(app.services.pictures.dir));
  x.use('/docs', docsPage());
  x.use(routedRoutes);
  x.use(moduleRouter(app));
  // The hosted pages (src/web): after every API route, before the API's 404.
  x.use(web.router);

  x.use(limits.fallback);
  x.use(methodNotAllowed(app, coreRoutes));
  x.use(web.notFound);
  x.use(notFoundHandler);
  x.use(limits.onError);
  x.use(
    errorHandler(logger, (err) => {
      app.dbHealth.observe(err);
      app.metrics.unavailableAnswer('database');
    }),
  );
  return x;
}
