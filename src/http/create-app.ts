import express, { type Express } from 'express';
import helmet from 'helmet';
import { pinoHttp } from 'pino-http';
import type { AppContext } from '../app-context.js';
import { toHandlers, type RouteDef } from './define-route.js';
import { coreRoutes } from './routes/index.js';
import { errorHandler, notFoundHandler } from './middleware/errors.js';
import { redactUrl, requestId } from './middleware/request-id.js';
import { cors } from './middleware/cors.js';

/** Mounts one route definition on an express app or router. */
export function mountRoute(target: express.Router, def: RouteDef<any, any, any>, app: AppContext): void {
  target[def.method](def.path, ...toHandlers(def, app));
}

/** Builds the express app (no listen). */
export function createApp(app: AppContext): Express {
  const { config, logger } = app;
  const x = express();
  x.disable('x-powered-by');
  x.set('trust proxy', config.trustProxy);
  x.set('query parser', 'simple');
  x.use(requestId);
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
  x.use(helmet());
  x.use(cors(config.corsOrigins));
  x.use(express.json({ limit: config.bodyLimit, type: ['application/json', 'application/*+json'] }));

  const router = express.Router();
  for (const def of coreRoutes) mountRoute(router, def, app);
  x.use(router);
  x.use(app.modules.router);

  x.use(notFoundHandler);
  x.use(errorHandler(logger));
  return x;
}
