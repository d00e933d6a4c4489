import { ok, warn, type Check } from './check.js';

/**
 * Expired sessions still stored. They no longer validate, but a backlog larger than one run of the
 * session-expiry job can clear (or any backlog with jobs off) grows the table and its indexes.
 */
export const sessionBacklogCheck: Check = {
  id: 'session-backlog',
  title: 'Expired sessions waiting for deletion',
  category: 'storage',
  needs: ['database', 'migrations'],
  async run(ctx) {
    const config = ctx.requireConfig();
    const app = await ctx.app();
    const backlog = await app.services.sessions.expiredBacklog();
    const n = backlog.toLocaleString('en-US');
    if (backlog > 0 && !config.jobsEnabled) {
      return warn(`${n} expired sessions stored and JOBS_ENABLED is false`, 'run gatehouse sessions prune (e.g. from cron), or enable jobs on one instance');
    }
    if (backlog > config.sessionExpiryMaxPerRun) {
      return warn(
        `${n} expired sessions stored, more than one run of the session-expiry job deletes (SESSION_EXPIRY_MAX_PER_RUN ${config.sessionExpiryMaxPerRun})`,
        'run gatehouse sessions prune, or raise SESSION_EXPIRY_MAX_PER_RUN',
      );
    }
    return ok(backlog ? `${n} expired sessions; the session-expiry job deletes them within 10 minutes` : 'none');
  },
};
