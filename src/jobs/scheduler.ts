import cron, { type ScheduledTask } from 'node-cron';
import type { DatabaseHealth } from '../data/db-health.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { claimRun, finishRun, type JobRunStore } from './job-lock.js';
import type { JobDef, JobDeps } from './core-jobs.js';

/** What the scheduler works with: the jobs' own needs, the run claims, the database's health, where to log and count. */
export type SchedulerDeps = JobDeps &
  JobRunStore & {
    dbHealth: Pick<DatabaseHealth, 'on' | 'available' | 'observe'>;
    logger: Logger;
    metrics?: Pick<Metrics, 'jobRun'>;
    /** The module runtime: module jobs join (and leave) with installs. */
    modules?: { attachScheduler?(sink: Scheduler): void };
  };

export interface Scheduler {
  /** Runs a job now under the same once-per-tick lock (used by tests and the CLI). */
  runNow(job: JobDef, tick?: Date): Promise<{ ran: boolean; detail?: string }>;
  /** Replaces the tasks of a group (`modules`: jobs of installed modules, re-synced on every install). */
  sync(group: string, jobs: JobDef[]): void;
  /** Names of the scheduled jobs, per group. */
  scheduled(): Record<string, string[]>;
  /** Stops the ticks and waits for running jobs, at most `withinMs`. */
  stop(withinMs?: number): Promise<void>;
}

/** A job's detail whose every count is zero ("0 scheduled posts published") reports a run that changed nothing. */
const didNothing = (detail: string) => /\d/.test(detail) && (detail.match(/\d+/g) ?? []).every((n) => Number(n) === 0);

/** A six-field cron expression runs more than once a minute. */
const hasSeconds = (job: JobDef) => job.schedule.trim().split(/\s+/).length === 6;

/** Starts node-cron tasks for the given jobs; each tick runs on one instance only. */
export function startScheduler(app: SchedulerDeps, jobs: JobDef[]): Scheduler {
  const groups = new Map<string, { tasks: ScheduledTask[]; names: string[] }>();
  let running = 0;
  let stopped = false;

  // One line per outage, not one per tick: the health tracker logs the outage itself.
  let pausedLogged = false;
  app.dbHealth.on('recovered', () => (pausedLogged = false));
  const skipTick = (job: JobDef) => {
    if (pausedLogged) return;
    pausedLogged = true;
    app.logger.warn({ job: job.name }, 'jobs paused while the database is unavailable: their ticks are skipped until it returns');
  };

  /**
   * Never rejects: a tick is fired and forgotten by the cron task, so a rejection here would be
   * unhandled. While the database is down the tick is skipped (the next one catches up: the jobs
   * work off what is due, not what happened during the tick).
   */
  async function runNow(job: JobDef, tick = new Date()): Promise<{ ran: boolean; detail?: string }> {
    if (!app.dbHealth.available()) {
      skipTick(job);
      return { ran: false, detail: 'database unavailable' };
    }
    running++;
    try {
      let key: string | null;
      try {
        key = await claimRun(app, job.name, tick, hasSeconds(job));
      } catch (err) {
        if (app.dbHealth.observe(err)) skipTick(job);
        // A tick cut short by the stop (the database closed under it) is no failure.
        else if (stopped) app.logger.debug({ job: job.name, err: (err as Error).message }, 'job tick ended by the stop');
        else app.logger.error({ job: job.name, err: (err as Error).message }, 'job could not be claimed');
        return { ran: false, detail: (err as Error).message };
      }
      if (!key) return { ran: false };
      try {
        const detail = await job.run(app);
        await finishRun(app, key, 'ok', detail).catch(() => undefined);
        app.metrics?.jobRun(job.name, true);
        // A run that found nothing to do ("0 … deleted") is routine: visible with --verbose only.
        app.logger[didNothing(detail) ? 'debug' : 'info']({ job: job.name, detail }, 'job finished');
        return { ran: true, detail };
      } catch (err) {
        await finishRun(app, key, 'failed', (err as Error).message).catch(() => undefined);
        app.metrics?.jobRun(job.name, false);
        if (app.dbHealth.observe(err)) skipTick(job);
        else if (stopped) app.logger.debug({ job: job.name, err: (err as Error).message }, 'job ended by the stop');
        else app.logger.error({ job: job.name, err: (err as Error).message }, 'job failed');
        return { ran: true, detail: (err as Error).message };
      }
    } finally {
      running--;
    }
  }

  function sync(group: string, list: JobDef[]): void {
    if (stopped) return;
    for (const t of groups.get(group)?.tasks ?? []) void t.stop();
    const tasks = list.map((job) =>
      cron.schedule(
        job.schedule,
        (ctx) => {
          // A seconds schedule is claimed by its planned tick, the same on every instance.
          const tick = (hasSeconds(job) ? ctx?.date : undefined) ?? ctx?.triggeredAt ?? new Date();
          void runNow(job, tick);
        },
        { name: job.name, noOverlap: true },
      ),
    );
    groups.set(group, { tasks, names: list.map((j) => j.name) });
  }

  sync('core', jobs);
  const scheduler: Scheduler = {
    runNow,
    sync,
    scheduled: () => Object.fromEntries([...groups].map(([g, v]) => [g, v.names])),
    async stop(withinMs = 10_000) {
      stopped = true;
      for (const g of groups.values()) for (const t of g.tasks) await t.stop();
      const deadline = Date.now() + withinMs;
      while (running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    },
  };
  // Module jobs join (and leave) with installs, on every instance that runs a scheduler.
  app.modules?.attachScheduler?.(scheduler);
  return scheduler;
}
