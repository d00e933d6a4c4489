import cluster from 'node:cluster';
import { InvalidArgumentError, type Command } from 'commander';
import type { AppContext } from '../../app-context.js';
import type { Config } from '../../config/schema.js';
import { createLogger, type Logger } from '../../log/logger.js';
import { createCheckContext } from '../checks/check.js';
import { preflightChecks } from '../checks/index.js';
import { commandUi, loadCliConfig, openApp, type CommandRegistrar, type ConfigFlags } from '../context.js';
import { portArg } from '../arg-parsers.js';
import { CliError } from '../errors.js';
import { applyMigrations } from '../migrations.js';
import { Ui } from '../ui.js';
import { logStreams } from '../log-ui.js';
import { supervise, waitForStop, WORKER_LISTENING } from './serve-cluster.js';

interface ServeOptions {
  port?: string;
  host?: string;
  workers: number;
  migrate?: boolean;
}

/** How long in-flight requests get to finish after SIGTERM. */
const GRACE_MS = 10_000;

function workerCount(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 64) throw new InvalidArgumentError('expected a whole number from 1 to 64');
  return Number(v);
}

export const registerServe: CommandRegistrar = (program, rt) => {
  program
    .command('serve')
    .description('Check the setup, then run the HTTP server until SIGTERM/SIGINT (graceful shutdown)')
    .option('--port <n>', 'TCP port (overrides PORT)', portArg)
    .option('--host <host>', 'address to bind (overrides HOST)')
    .option('--workers <n>', 'processes sharing the port; a crashed one is restarted', workerCount, 1)
    .option('--migrate', 'apply pending migrations before starting (otherwise pending migrations stop it)')
    .action(async (opts: ServeOptions, cmd: Command) => {
      const flags: ConfigFlags = { PORT: opts.port, HOST: opts.host };
      if (cluster.isWorker) return serveWorker(cmd, flags);
      const tty = commandUi(rt, cmd);
      const config = loadCliConfig(cmd, flags);
      const logger = createLogger(tty.verbose ? 'debug' : config.logLevel);
      // In a terminal, lines for people; anywhere else the log is JSON, so they become log entries too.
      const ui = rt.streams.stdout.isTTY ? tty : new Ui(logStreams(logger, rt.streams), { verbose: tty.verbose });
      const app = await prepare(config, ui, logger, Boolean(opts.migrate));
      try {
        if (opts.workers > 1 && !config.redisUrl) {
          ui.warn(`--workers ${opts.workers} without REDIS_URL: rate limits and session caches are per worker; set REDIS_URL to share them`);
        }
        if (opts.workers > 1) rt.exitCode = await servePrimary(app, ui, opts.workers);
        else await serveSingle(app, ui);
      } finally {
        await app.close();
      }
    });
};

/** Preflight (config, Node, data dir, database, Redis, migrations), then the app context. */
async function prepare(config: Config, ui: Ui, logger: Logger, migrate: boolean): Promise<AppContext> {
  const ctx = createCheckContext({ config, logger, openApp: (c) => openApp(c, logger) });
  try {
    for (const check of preflightChecks('serve')) {
      if (migrate && check.id === 'migrations') continue;
      const r = await check.run(ctx);
      if (r.status === 'fail') {
        throw new CliError(`refusing to start: ${r.message}`, r.hint);
      }
      if (r.status === 'warn') ui.warn(`${check.title}: ${r.message}`);
    }
    const app = await ctx.app();
    if (migrate) await applyMigrations(app, ui);
    return app;
  } catch (err) {
    await ctx.close();
    throw err;
  }
}

async function startJobs(app: AppContext) {
  if (!app.config.jobsEnabled) return null;
  const [{ startScheduler }, { coreJobs }] = await Promise.all([import('../../jobs/scheduler.js'), import('../../jobs/core-jobs.js')]);
  return startScheduler(app, coreJobs);
}

async function listen(app: AppContext) {
  const { startServer } = await import('../../http/server.js');
  const { port, host } = app.config;
  try {
    return await startServer(app, { port, host });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CliError(`port ${port} on ${host} is already in use`, 'stop the other process or choose another --port');
    if (code === 'EACCES')
      throw new CliError(`not allowed to listen on ${host}:${port}`, 'ports below 1024 need privileges; use a higher --port behind a proxy');
    throw err;
  }
}

async function superadminHint(app: AppContext, ui: Ui): Promise<void> {
  if ((await app.repos.users.count({ user_type: 'superadmin' })) > 0) return;
  ui.print('No superadmin yet. Create the first one:');
  ui.print(`  gatehouse user create --type superadmin --email you@example.com --data-dir ${app.config.dataDirAbs}`);
}

/** METRICS_PORT: /metrics on a port of its own, answered from `scrape`. */
async function startMetricsPort(app: AppContext, ui: Ui, scrape: () => Promise<string>) {
  const port = app.config.metricsPort;
  if (!port) return null;
  const { startMetricsServer } = await import('../../metrics/metrics-server.js');
  try {
    const server = await startMetricsServer(scrape, app.config, port);
    ui.note(`metrics on ${server.url}`);
    return server;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new CliError(
        `METRICS_PORT ${port} on ${app.config.host} is already in use`,
        'choose another METRICS_PORT, or unset it to serve /metrics on the API port',
      );
    throw err;
  }
}

async function serveSingle(app: AppContext, ui: Ui): Promise<void> {
  // Handlers go in before anything is announced, so a signal right after "listening" still shuts down gracefully.
  const stopping = waitForStop();
  const metricsServer = await startMetricsPort(app, ui, () => app.metrics.scrape());
  const server = await listen(app);
  const jobs = await startJobs(app);
  ui.print(`Gatehouse listening on ${server.url}`);
  await superadminHint(app, ui);
  const signal = await stopping;
  ui.note(`${signal}: finishing in-flight requests, then stopping`);
  await server.close(GRACE_MS);
  await jobs?.stop();
  await metricsServer?.close();
  ui.note('Gatehouse stopped');
}

/** The primary checks, migrates and runs the jobs once; workers only serve HTTP. */
async function servePrimary(app: AppContext, ui: Ui, workers: number): Promise<number> {
  // Every worker's /metrics answers with the sum over all processes (see cluster-metrics.ts).
  const { relayClusterMetrics } = await import('../../metrics/cluster-metrics.js');
  const relay = relayClusterMetrics(cluster, app.metrics);
  const metricsServer = await startMetricsPort(app, ui, relay.text);
  const jobs = await startJobs(app);
  await superadminHint(app, ui);
  const code = await supervise(cluster, { workers, ui, graceMs: GRACE_MS });
  relay.stop();
  await metricsServer?.close();
  await jobs?.stop();
  ui.note('Gatehouse stopped');
  return code;
}

async function serveWorker(cmd: Command, flags: ConfigFlags): Promise<void> {
  const config = loadCliConfig(cmd, flags);
  const app = await openApp(config, createLogger(config.logLevel));
  try {
    const stopping = waitForStop({ orPrimaryGone: true });
    const { joinClusterMetrics } = await import('../../metrics/cluster-metrics.js');
    joinClusterMetrics(app.metrics);
    const server = await listen(app);
    process.send?.({ type: WORKER_LISTENING, url: server.url, pid: process.pid });
    await stopping;
    await server.close(GRACE_MS);
  } finally {
    await app.close();
  }
}
