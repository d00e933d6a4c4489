import { existsSync } from 'node:fs';
import os from 'node:os';
import { defineConfig } from 'vitest/config';

const integrationFiles = ['test/integration/**/*.test.ts', 'test/oidc/**/*.test.ts', 'modules/**/*.test.ts'];
const bothBackends = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
/** The browser tier runs where a Chromium is found (test/helpers/chromium.ts says where; scripts/test.mjs says when it skips). */
const chromium = process.env.CHROMIUM_PATH ? existsSync(process.env.CHROMIUM_PATH) : existsSync('/usr/bin/chromium');
const browserTier = (name: string, backend: 'sqlite' | 'pg') => ({
  extends: true as const,
  test: { name, include: ['test/browser/**/*.test.ts'], testTimeout: 60_000, env: { GATEHOUSE_TEST_BACKEND: backend } },
});

/**
 * Test files at once. vitest's own default is one fewer than the cores, which is one file at a time on
 * a two-core machine; most of the suite waits (on servers it starts, PostgreSQL, Redis, mail, CLI
 * processes, Chromium), so two files at once on two cores take about two thirds of the time. The fault
 * tier runs alone afterwards (sequence.groupOrder 1): its outages and stop deadlines are timed.
 */
const FILES_AT_ONCE = Math.max(2, os.availableParallelism() - 1);

/**
 * Five tiers (unit, integration, browser, cli, faults), and a smoke run of the server. The integration tier runs on SQLite + in-process backends,
 * and a second time on PostgreSQL + Redis when TEST_DATABASE_URL and TEST_REDIS_URL are set.
 */
export default defineConfig({
  test: {
    reporters: ['default', ['json', { outputFile: 'test-results/results.json' }]],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: FILES_AT_ONCE,
    // expect.poll waits up to 5 s (default 1 s): mail, log lines and other instances' caches change after the answer, on a busy machine.
    expect: { poll: { timeout: 5_000 } },
    projects: [
      { extends: true as const, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      // The real server started as a user starts it: with the unit tier, `npm run test:quick`.
      { extends: true as const, test: { name: 'smoke', include: ['test/smoke/**/*.test.ts'] } },
      {
        extends: true as const,
        // *.pg.test.ts: what exists only on PostgreSQL (a database server that can go away).
        test: {
          name: 'integration:sqlite',
          include: integrationFiles,
          exclude: ['**/*.pg.test.ts', '**/node_modules/**'],
          env: { GATEHOUSE_TEST_BACKEND: 'sqlite' },
        },
      },
      ...(bothBackends
        ? [
            {
              extends: true as const,
              test: { name: 'integration:pg', include: integrationFiles, env: { GATEHOUSE_TEST_BACKEND: 'pg' } },
            },
          ]
        : []),
      // Real pages in headless Chromium (one browser per file), on each backend the integration tier runs.
      ...(chromium ? [browserTier('browser:sqlite', 'sqlite'), ...(bothBackends ? [browserTier('browser:pg', 'pg')] : [])] : []),
      {
        extends: true as const,
        // Whole processes under outages and signals, on SQLite and (with the URLs set) PostgreSQL + Redis.
        test: { name: 'faults', include: ['test/faults/**/*.test.ts'], testTimeout: 300_000, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
      {
        extends: true as const,
        test: {
          name: 'cli',
          include: ['test/cli/**/*.test.ts'],
          // The CLI on PostgreSQL + Redis (and .ci/run's clean-up) runs with that tier only: the default run needs no server.
          exclude: bothBackends ? [] : ['test/cli/postgres.test.ts', 'test/cli/ci-resources.test.ts'],
          testTimeout: 300_000,
        },
      },
    ],
  },
});
