import { defineRoute } from '../define-route.js';
import { withTimeout } from '../../with-timeout.js';

export const liveness = defineRoute({
  method: 'get',
  path: '/health',
  summary: 'Liveness probe: the process is up',
  auth: 'public',
  rateLimit: false,
  handler: () => ({ success: true, status: 'ok' }),
});

/**
 * Ready when the database answers and, if configured, Redis does. While Redis is down the instance
 * still serves (from the database, with in-process rate limits) and says so in `degraded`, but
 * reports 503 so an orchestrator or load balancer can tell.
 */
export const readiness = defineRoute({
  method: 'get',
  path: '/ready',
  summary: 'Readiness probe: the database and Redis answer',
  auth: 'public',
  rateLimit: false,
  async handler({ app, res }) {
    const checks: Record<string, 'ok' | 'fail'> = {};
    const degraded: string[] = [];
    // During a known outage the answer is at once; the health tracker's probe finds the way back.
    checks.database =
      app.dbHealth.available() &&
      (await withTimeout(app.sequelize.query('SELECT 1'), 2_000).then(
        () => true,
        () => false,
      ))
        ? 'ok'
        : 'fail';
    if (!app.dbHealth.available()) degraded.push('database unavailable since ' + app.dbHealth.status().since);
    if (app.redis && app.redisHealth) {
      const redis = app.redis;
      const up = await app.redisHealth.run(
        'ping',
        async () => (await redis.ping()) === 'PONG',
        () => false,
      );
      checks.redis = up ? 'ok' : 'fail';
      if (!up) {
        degraded.push('redis unavailable since ' + app.redisHealth.status().since);
        degraded.push('sessions and users read from the database and in-process copies');
        degraded.push('rate limits and login backoff counted in process, at half budget');
      }
    }
    const ok = Object.values(checks).every((c) => c === 'ok');
    if (!ok) res.setHeader('Retry-After', '5');
    res.status(ok ? 200 : 503).json({ success: ok, status: ok ? 'ready' : 'unavailable', checks, ...(degraded.length ? { degraded } : {}) });
  },
});
