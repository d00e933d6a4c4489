import type { RouteDef } from '../define-route.js';
import * as health from './health.routes.js';

/** The table of contents of the core API: one line per route. */
export const coreRoutes: RouteDef<any, any, any>[] = [
  health.liveness, // GET /health
  health.readiness, // GET /ready
];
