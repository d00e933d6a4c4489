import { Op } from 'sequelize';
import { isUniqueViolation } from '../data/db-errors.js';
import type { SystemModels } from '../data/models/system.models.js';

/** The job_runs table, and this process's name for the rows it claims. */
export interface JobRunStore {
  models: Pick<SystemModels, 'JobRun'>;
  instanceId: string;
}

/**
 * Claims one scheduled run. The run key names the job and its tick, so with several workers or
 * instances the first to insert the row runs it and the rest skip: each run happens once.
 */
export async function claimRun(app: JobRunStore, job: string, tick: Date, perSecond = false): Promise<string | null> {
  // Minute ticks by default; a job with a seconds field in its schedule claims each second's tick.
  const runKey = `${job}@${tick.toISOString().slice(0, perSecond ? 19 : 16)}`;
  try {
    await app.models.JobRun.create({ run_key: runKey, job, holder: app.instanceId, status: 'running', started_at: new Date() });
    return runKey;
  } catch (err) {
    if (isUniqueViolation(err)) return null;
    throw err;
  }
}

export async function finishRun(app: Pick<JobRunStore, 'models'>, runKey: string, status: 'ok' | 'failed', detail?: string): Promise<void> {
  await app.models.JobRun.update({ status, detail: detail?.slice(0, 500) ?? null, finished_at: new Date() }, { where: { run_key: runKey } });
}

/** Job history older than `days` is dropped. */
export async function pruneRuns(app: Pick<JobRunStore, 'models'>, days = 7): Promise<number> {
  return app.models.JobRun.destroy({ where: { started_at: { [Op.lt]: new Date(Date.now() - days * 86400_000) } } });
}
