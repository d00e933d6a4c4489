import type { AppContext } from '../app-context.js';
import { pruneRuns } from './job-lock.js';

export interface JobDef {
  name: string;
  /** node-cron expression. */
  schedule: string;
  run(app: AppContext): Promise<string>;
}

export const sessionExpiryJob: JobDef = {
  name: 'session-expiry',
  schedule: '*/10 * * * *',
  async run(app) {
    const n = await app.services.sessions.pruneExpired({ batch: app.config.sessionExpiryBatch, max: app.config.sessionExpiryMaxPerRun });
    return `${n} expired sessions deleted`;
  },
};

export const tokenCleanupJob: JobDef = {
  name: 'token-cleanup',
  schedule: '17 * * * *',
  async run(app) {
    const tokens = await app.repos.authTokens.deleteSpent(new Date());
    const runs = await pruneRuns(app);
    return `${tokens} tokens and ${runs} job records deleted`;
  },
};

export const coreJobs: JobDef[] = [sessionExpiryJob, tokenCleanupJob];
