import { defineRoute } from '../define-route.js';

export const liveness = defineRoute({
  method: 'get',
  path: '/health',
  auth: 'public',
  handler: () => ({ success: true, status: 'ok' }),
});

/** Ready when the database answers and, if configured, Redis does. */
export const readiness = defineRoute({
  method: 'get',
  path: '/ready',
  auth: 'public',
  async handler({ app, res }) {
    const checks: Record<string, 'ok' | 'fail'> = {};
    try {
      await app.sequelize.query('SELECT 1');
      checks.database = 'ok';
    } catch {
      checks.database = 'fail';
    }
    if (app.redis) {
      try {
        await app.redis.ping();
        checks.redis = 'ok';
      } catch {
        checks.redis = 'fail';
      }
    }
    const ok = Object.values(checks).every((c) => c === 'ok');
    res.status(ok ? 200 : 503).json({ success: ok, status: ok ? 'ready' : 'unavailable', checks });
  },
});
