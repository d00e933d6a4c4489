import type { ModuleJob } from './core.js';
import { publishDue } from './posts-write.js';

/** Publishes due scheduled posts every five seconds, on one instance per tick (the core job lock). */
export const publishScheduledJob: ModuleJob = {
  name: 'blog-publish-scheduled',
  schedule: '*/5 * * * * *',
  async run(app) {
    const n = await publishDue(app);
    return `${n} scheduled posts published`;
  },
};
