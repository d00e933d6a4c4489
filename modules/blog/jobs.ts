import { type ModuleJob } from '../../src/module-api.js';
import { publishDue } from './posts-write.js';

/** Publishes due scheduled posts every five seconds, on one instance per tick (the core job lock). */
export const publishScheduledJob: ModuleJob = {
  name: 'blog-publish-scheduled',
  schedule: '*/5 * * * * *',
  async run(ctx) {
    const n = await publishDue(ctx);
    return `${n} scheduled posts published`;
  },
};
