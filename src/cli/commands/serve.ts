import cluster from 'node:cluster';
import type http from 'node:http';
import { InvalidArgumentError, type Command } from 'commander';
import type { AppContext } from '../../app-context.js';
import type { Config } from '../../config/schema.js';
import { createLogger, type Logger } from '../../log/logger.js';
import { createCheckContext } from '../checks/check.js';
import { preflightChecks } from '../checks/index.js';
import { databaseCheck } from '../checks/database.js';
import { commandUi, loadCliConfig, openApp, type CliRuntime, type CommandRegistrar, type ConfigFlags } from '../context.js';
import { portArg } from '../arg-parsers.js';
import { CliError } from '../errors.js';
import { applyMigrations } from '../migrations.js';
import { Ui } from '../ui.js';
import { logStreams } from '../log-ui.js';
import { supervise, waitForStop, WORKER_LISTENING } from './serve-cluster.js';
import { installLastResort } from '../last-resort.js';
import { isDatabaseUnavailable } from '../../data/db-errors.js';
import { outsideAuditScope } from '../../audit/audit-scope.js';

interface ServeOptions {
  port?: string;
  host?: string;
  workers: number;
  migrate?: boolean;
}

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
    // The CLI's audit scope (create-cli.ts) ends here: the server's events come from its requests and jobs.
    .action((opts: ServeOptions, cmd: Command) => outsideAuditScope(() => serve(opts, cmd)));

  async function serve(opts: ServeOptions, cmd: Command): Promise<void> {
    const flags: ConfigFlags = { PORT: opts.port, HOST: opts.host };
    if (cluster.isWorker) return serveWorker(rt, cmd, flags);
    const tty = commandUi(rt, cmd);
    const config = loadCliConfig(rt, cmd, flags);
    const logger = createLogger(tty.verbose ? 'debug' : config.logLevel);
    installLastResort(logger);
    // In a terminal, lines for people; anywhere else the log is JSON, so they become log entries too.
    const ui = rt.streams.stdout.isTTY ? tty : new Ui(logStreams(logger, rt.streams), { verbose: tty.verbose });
    const stop = stopWatch(config, logger);
    if (opts.workers > 1 && !config.redisUrl) {
      ui.warn(`--workers ${opts.workers} without REDIS_URL: rate limits and session caches are per worker; set REDIS_URL to share them`);
    }
    if (opts.workers > 1) rt.exitCode = await servePrimary(rt, config, ui, logger, stop, opts);
    else await serveSingle(rt, config, ui, logger, stop, Boolean(opts.migrate));
  }
};

/** The first stop signal, and the deadline that starts with it. */
interface StopWatch {
  signal: Promise<string>;
  graceMs: number;
  /** Time left until the process must have exited (SHUTDOWN_TIMEOUT + 5 s from the signal), less a margin. */
  remaining(): number;
}

/**
 * Every stop ends within SHUTDOWN_TIMEOUT + 5 s: each step has its own deadline, and should one still
 * hang (a driver that never settles), this timer ends the process anyway.
 */
function stopWatch(config: Config, logger: Logger, opts: { orPrimaryGone?: boolean } = {}): StopWatch {
  const graceMs = config.shutdownTimeout * 1000;
  let end = Infinity;
  const signal = waitForStop(opts).then((s) => {
    end = Date.now() + graceMs + 4_000;
    setTimeout(() => {
      logger.error({ graceMs }, 'shutdown did not finish in time: exiting now');
      process.exit(1);
    }, graceMs + 4_800).unref();
    return s;
  });
  return { signal, graceMs, remaining: () => Math.max(100, end - Date.now()) };
}

/** The module registry handed down from the composition root (CliRuntime.modules). */
type ModuleList = Pick<CliRuntime, 'modules'>;

type Prepared = { app: AppContext } | { unreachable: string };

/**
 * Preflight (config, Node, data dir, database, Redis, migrations), then the app context. A database
 * that cannot be reached right now is no reason to refuse: the caller serves 503 and tries again.
 */
async function prepare(rt: ModuleList, config: Config, ui: Ui, logger: Logger, migrate: boolean, quiet = false): Promise<Prepared> {
  // Without --migrate nothing may be created: a wrong data dir is refused, not given an empty database.
  const ctx = createCheckContext({ config, logger, modules: rt.modules, openApp: (c) => openApp(rt, c, logger), readOnly: !migrate });
  try {
    for (const check of preflightChecks('serve')) {
      if (migrate && check.id === 'migrations') continue;
      const r = await check.run(ctx);
      if (r.status === 'fail' && r.transient) {
        await ctx.close();
        return { unreachable: r.message };
      }
      if (r.status === 'fail') throw new CliError(`refusing to start: ${r.message}`, r.hint);
      if (r.status === 'warn' && !quiet) ui.warn(`${check.title}: ${r.message}`);
    }
    const app = await ctx.app();
    if (migrate) await applyMigrations(app, ui);
    return { app };
  } catch (err) {
    await ctx.close();
    if (isDatabaseUnavailable(err)) return { unreachable: (err as Error).message };
    throw err;
  }
}

/** Opens the app once the database can be reached (backing off to 5 s between tries); null if stopped first. */
async function untilReachable(first: Prepared, attempt: () => Promise<Prepared>, stop: StopWatch, reached: () => void): Promise<AppContext | null> {
  let result = first;
  let stopped = false;
  void stop.signal.then(() => (stopped = true));
  for (let delay = 1_000; 'unreachable' in result; delay = Math.min(delay * 2, 5_000)) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([stop.signal, new Promise((r) => (timer = setTimeout(r, delay)))]);
    clearTimeout(timer);
    if (stopped) return null;
    result = await attempt();
  }
  reached();
  return result.app;
}

/** `serve` and the primary while the database is away: say so, retry the preflight, say when it got through. */
function waitForDatabase(first: { unreachable: string }, retry: () => Promise<Prepared>, ui: Ui, stop: StopWatch): Promise<AppContext | null> {
  ui.warn(`database unreachable (${first.unreachable}): answering 503 with Retry-After until it is back; retrying with backoff`);
  return untilReachable(first, retry, stop, () => ui.note('database reachable: serving'));
}

async function startJobs(app: AppContext) {
  if (!app.config.jobsEnabled) return null;
  const [{ startScheduler }, { coreJobs }] = await Promise.all([import('../../jobs/scheduler.js'), import('../../jobs/core-jobs.js')]);
  return startScheduler(app, coreJobs);
}

async function listen(config: Config, handler: http.RequestListener) {
  const { startHttpServer } = await import('../../http/server.js');
  const { port, host } = config;
  try {
    return await startHttpServer(handler, { port, host });
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
async function startMetricsPort(config: Config, ui: Ui, scrape: () => Promise<string>) {
  const port = config.metricsPort;
  if (!port) return null;
  const { startMetricsServer } = await import('../../metrics/metrics-server.js');
  try {
    const server = await startMetricsServer(scrape, config, port);
    ui.note(`metrics on ${server.url}`);
    return server;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new CliError(
        `METRICS_PORT ${port} on ${config.host} is already in use`,
        'choose another METRICS_PORT, or unset it to serve /metrics on the API port',
      );
    throw err;
  }
}

async function appHandler(app: AppContext): Promise<http.RequestListener> {
  const { createRequestListener } = await import('../../http/create-app.js');
  return createRequestListener(app);
}

/** The admin list's deep pages answer from anchors; the default listing's are built now, not by the first operator to ask (docs/admin-users.md). */
function warmAdminList(app: AppContext, logger: Logger): void {
  app.repos.users
    .warmList()
    .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'admin list anchors: build failed; the first deep page builds them'));
}

async function waitingHandler(): Promise<http.RequestListener> {
  const { unavailableHandler } = await import('../../http/unavailable-handler.js');
  return unavailableHandler(new Date());
}

async function serveSingle(rt: ModuleList, config: Config, ui: Ui, logger: Logger, stop: StopWatch, migrate: boolean): Promise<void> {
  const first = await prepare(rt, config, ui, logger, migrate);
  let app = 'app' in first ? first.app : null;
  try {
    // Non-null: the scrape is served only once the app has started.
    const scrape = () => app!.metrics.scrape();
    let metricsServer = app ? await startMetricsPort(config, ui, scrape) : null;
    const server = await listen(config, app ? await appHandler(app) : await waitingHandler());
    ui.print(`Gatehouse listening on ${server.url}`);
    if ('unreachable' in first) {
      app = await waitForDatabase(first, () => prepare(rt, config, ui, logger, migrate, true), ui, stop).catch(async (err: unknown) => {
        await server.close(0);
        throw err;
      });
      if (app) {
        server.setHandler(await appHandler(app));
        metricsServer = await startMetricsPort(config, ui, scrape);
      }
    }
    const jobs = app ? await startJobs(app) : null;
    // Webhook deliveries run where the jobs do (one-shot commands never start it); app.close stops it.
    app?.services.webhooks.startWorker();
    if (app) warmAdminList(app, logger);
    if (app) await superadminHint(app, ui);
    const signal = await stop.signal;
    ui.note(`${signal}: finishing in-flight requests, then stopping`);
    await server.close(stop.graceMs);
    await jobs?.stop(Math.min(1_000, stop.remaining()));
    await metricsServer?.close();
    ui.note('Gatehouse stopped');
  } finally {
    await app?.close({ withinMs: stop.remaining() });
  }
}

/** The primary checks, migrates and runs the jobs once; workers only serve HTTP. */
async function servePrimary(rt: ModuleList, config: Config, ui: Ui, logger: Logger, stop: StopWatch, opts: ServeOptions): Promise<number> {
  const first = await prepare(rt, config, ui, logger, Boolean(opts.migrate));
  let app = 'app' in first ? first.app : null;
  try {
    // Every worker's /metrics answers with the sum over all processes (see cluster-metrics.ts).
    const { relayClusterMetrics } = await import('../../metrics/cluster-metrics.js');
    const metrics = app?.metrics ?? (await import('../../metrics/metrics.js')).createMetrics();
    const relay = relayClusterMetrics(cluster, metrics);
    // Workers' counts are relayed whether or not the primary's app is open yet.
    const metricsServer = await startMetricsPort(config, ui, relay.text);
    // Workers start at once: while the database is away they answer 503 themselves.
    const supervised = supervise(cluster, { workers: opts.workers, ui, graceMs: stop.graceMs });
    let failure: unknown = null;
    if ('unreachable' in first) {
      app = await waitForDatabase(first, () => prepare(rt, config, ui, logger, Boolean(opts.migrate), true), ui, stop).catch((err: unknown) => {
        failure = err;
        // Stops the workers the same way a signal would.
        process.kill(process.pid, 'SIGTERM');
        return null;
      });
    }
    const jobs = app ? await startJobs(app) : null;
    // Webhook deliveries run where the jobs do (one-shot commands never start it); app.close stops it.
    app?.services.webhooks.startWorker();
    if (app) await superadminHint(app, ui);
    const code = await supervised;
    relay.stop();
    await metricsServer?.close();
    await jobs?.stop(Math.min(1_000, stop.remaining()));
    if (failure) throw failure as Error;
    ui.note('Gatehouse stopped');
    return code;
  } finally {
    await app?.close({ withinMs: stop.remaining() });
  }
}

async function serveWorker(rt: ModuleList, cmd: Command, flags: ConfigFlags): Promise<void> {
  const config = loadCliConfig(rt, cmd, flags);
  const logger = createLogger(config.logLevel);
  installLastResort(logger);
  const stop = stopWatch(config, logger, { orPrimaryGone: true });
  const open = async (): Promise<Prepared> => {
    try {
      // The database check first: it tells a locked SQLite file in a moment, where opening the app
      // would wait out every busy retry first.
      const db = await databaseCheck.run(createCheckContext({ config, logger, modules: rt.modules, openApp: (c) => openApp(rt, c, logger), readOnly: true }));
      if (db.status === 'fail' && db.transient) return { unreachable: db.message };
      return { app: await openApp(rt, config, logger) };
    } catch (err) {
      if (isDatabaseUnavailable(err)) return { unreachable: (err as Error).message };
      throw err;
    }
  };
  const first = await open();
  let app = 'app' in first ? first.app : null;
  try {
    const { joinClusterMetrics } = await import('../../metrics/cluster-metrics.js');
    if (app) joinClusterMetrics(app.metrics);
    const server = await listen(config, app ? await appHandler(app) : await waitingHandler());
    process.send?.({ type: WORKER_LISTENING, url: server.url, pid: process.pid });
    if (!app) {
      app = await untilReachable(first, open, stop, () => logger.info('database reachable: serving'));
      if (app) {
        joinClusterMetrics(app.metrics);
        server.setHandler(await appHandler(app));
      }
    }
    if (app) warmAdminList(app, logger);
    await stop.signal;
    await server.close(stop.graceMs);
  } finally {
    await app?.close({ withinMs: stop.remaining() });
  }
}
