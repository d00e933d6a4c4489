/** The job scheduler for tests that drive ticks by hand (module tests reach core through test helpers). */
export { startScheduler } from '../../src/jobs/scheduler.js';
