import cron, { type ScheduledTask } from 'node-cron';
import type { AppContext } from '../app-context.js';
import { claimRun, finishRun } from './job-lock.js';
import type { JobDef } from './core-jobs.js';

export interface Scheduler {
  /** Runs a job now under the same once-per-tick lock (used by tests and the CLI). */
  runNow(job: JobDef, tick?: Date): Promise<{ ran: boolean; detail?: string }>;
  stop(): Promise<void>;
}

/** Starts node-cron tasks for the given jobs; each tick runs on one instance only. */
export function startScheduler(app: AppContext, jobs: JobDef[]): Scheduler {
  const tasks: ScheduledTask[] = [];
  let running = 0;

  async function runNow(job: JobDef, tick = new Date()) {
    const key = await claimRun(app, job.name, tick);
    if (!key) return { ran: false };
    running++;
    try {
      const detail = await job.run(app);
      await finishRun(app, key, 'ok', detail);
      app.logger.info({ job: job.name, detail }, 'job finished');
      return { ran: true, detail };
    } catch (err) {
      await finishRun(app, key, 'failed', (err as Error).message).catch(() => undefined);
      app.logger.error({ job: job.name, err: (err as Error).message }, 'job failed');
      return { ran: true, detail: (err as Error).message };
    } finally {
      running--;
    }
  }

  for (const job of jobs) {
    tasks.push(
      cron.schedule(job.schedule, (ctx) => {
        const tick = ctx?.triggeredAt ?? new Date();
        void runNow(job, tick);
      }, { name: job.name, noOverlap: true }),
    );
  }

  return {
    runNow,
    async stop() {
      for (const t of tasks) await t.stop();
      const deadline = Date.now() + 10_000;
      while (running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    },
  };
}
