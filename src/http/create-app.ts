import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { AppContext } from '../app-context.js';
import { toHandlers } from './define-route.js';
import { coreRoutes } from './routes/index.js';
import { createCoreRouter } from './exact-routes.js';
import { servePictures } from './routes/picture.routes.js';
import { PICTURES_URL_PATH } from '../services/picture-service.js';
import { errorHandler, notFoundHandler } from './middleware/errors.js';
import { redactUrl, requestId } from './middleware/request-id.js';
import { cors } from './middleware/cors.js';
import { securityHeaders } from './middleware/security-headers.js';
import { createRateLimitLayers } from './middleware/rate-limit-gate.js';

/** Builds the express app (no listen). */
export function createApp(app: AppContext): Express {
  const { config, logger } = app;
  const x = express();
  x.disable('x-powered-by');
  x.set('trust proxy', config.trustProxy);
  x.set('query parser', 'simple');
  // API answers are small and per-user: hashing every body for an ETag costs more than it saves.
  x.set('etag', false);
  x.use(requestId);
  // Access lines are info; above that level pino-http would still build a child logger per request
  // for nothing, so it is mounted only when its lines can be written (failures are logged by the
  // error handler whatever the level).
  if (logger.isLevelEnabled('info')) {
    x.use(
      pinoHttp({
        logger,
        genReqId: (req) => (req as { id?: string }).id ?? '',
        serializers: {
          // Only what's needed: no headers (cookies, secrets), and no secrets in the query string.
          req: (req: { id?: string; method?: string; url?: string; remoteAddress?: string }) => ({
            id: req.id,
            method: req.method,
            url: redactUrl(req.url ?? ''),
            remoteAddress: req.remoteAddress,
          }),
          res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        },
        customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
      }),
    );
  }

  x.use(securityHeaders());
  // Preflights are counted before CORS answers them; everything else after CORS (a 429 stays
  // readable cross-origin) and before body parsing (a flood is refused unread).
  const limits = createRateLimitLayers(app, coreRoutes);
  x.use(limits.preflight);
  x.use(cors(config.corsOrigins));
  x.use(limits.gate);
  x.use(express.json({ limit: config.bodyLimit, type: ['application/json', 'application/*+json'] }));

  x.use(PICTURES_URL_PATH, servePictures(app.services.pictures.dir));

  x.use(...createCoreRouter(coreRoutes.map((def) => ({ method: def.method, path: def.path, handlers: toHandlers(def, app) }))));
  x.use(app.modules.router);

  x.use(limits.fallback);
  x.use(notFoundHandler);
  x.use(limits.onError);
  x.use(errorHandler(logger));
  return x;
}
