import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { AppContext } from '../app-context.js';
import type { ModuleManifest } from '../modules/define-module.js';
import { loadConfig } from '../config/load-config.js';
import { moduleEnvNames } from '../modules/module-env.js';
import type { Config, ConfigKey } from '../config/schema.js';
import { createLogger, useLogFormat, type Logger } from '../log/logger.js';
import { safeUrl } from './checks/check.js';
import { requireDatabase } from './database-file.js';
import { CliError } from './errors.js';
import { Ui, type CliStreams } from './ui.js';

/** Options every command accepts (declared once on the program). */
export interface GlobalOptions {
  dataDir?: string;
  environmentFile?: string;
  verbose?: boolean;
}

/** What commands share with run.ts. */
export interface CliRuntime {
  streams: CliStreams;
  /** Set by a command that finished but must exit non-zero (doctor with a failed check). */
  exitCode: number;
  /**
   * The modules that can be installed, handed down from the composition root (entry/cli.ts through
   * main): core imports no module, and keeps no registry of its own.
   */
  modules: readonly ModuleManifest[];
}

/** Adds one top-level command (and its subcommands) to the program. */
export type CommandRegistrar = (program: Command, rt: CliRuntime) => void;

export type ConfigFlags = Partial<Record<ConfigKey, unknown>>;

/** The Ui for a command, from its own and the global options (--json, --yes, --no-prompt, --verbose). */
export function commandUi(rt: CliRuntime, cmd: Command): Ui {
  const o = cmd.optsWithGlobals<{ json?: boolean; yes?: boolean; prompt?: boolean; verbose?: boolean }>();
  return new Ui(rt.streams, o);
}

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

/**
 * Loads the configuration with `--data-dir` and the command's flags as the top layer. A ConfigError
 * propagates to run.ts, which prints every wrong key and exits 1 before anything is opened.
 */
export function loadCliConfig(rt: Pick<CliRuntime, 'modules'>, cmd: Command, flags: ConfigFlags = {}, opts: { skipFile?: boolean } = {}): Config {
  const { dataDir, environmentFile: envFile } = globalOptions(cmd);
  const config = loadConfig({
    flags: { GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_ENV_FILE: envFile === undefined ? undefined : path.resolve(envFile), ...flags },
    skipFile: opts.skipFile,
    moduleEnv: moduleEnvNames(rt.modules),
  });
  useLogFormat(config.logFormat);
  return config;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/**
 * Logs of one-shot commands go to stderr, so they never mix with results on stdout, and stay quiet at
 * the default level (warnings and worse): debug with --verbose, or when LOG_LEVEL asks for debug or
 * trace; a level quieter than warn is kept.
 */
export function cliLogger(config: Config, ui: Ui): Logger {
  const asked = LEVELS.indexOf(config.logLevel);
  const level = ui.verbose && asked > LEVELS.indexOf('debug') ? 'debug' : asked === LEVELS.indexOf('info') ? 'warn' : config.logLevel;
  return createLogger(level, ui.streams.stderr, config.logFormat);
}

/** Opens the app context (database, Redis, modules); it and the route table are imported lazily so --help stays fast. */
export async function openApp(rt: Pick<CliRuntime, 'modules'>, config: Config, logger: Logger): Promise<AppContext> {
  // What --verbose and LOG_LEVEL=debug promise: where this process looks, before it opens anything.
  logger.debug(
    {
      dataDir: config.dataDirAbs,
      configFile: existsSync(config.configFile) ? config.configFile : null,
      envFile: config.envFile ?? null,
      database: config.databaseUrl ? safeUrl(config.databaseUrl) : 'sqlite (data dir)',
      redis: config.redisUrl ? safeUrl(config.redisUrl) : null,
      mail: config.smtpUrl ? safeUrl(config.smtpUrl) : 'outbox',
    },
    'configuration',
  );
  const started = performance.now();
  const [{ createAppContext }, { coreRoutes }] = await Promise.all([import('../app-context.js'), import('../http/routes/index.js')]);
  const app = await createAppContext(config, { logger, moduleRegistry: rt.modules, coreRoutes });
  logger.debug({ dialect: app.dialect, ms: Math.round(performance.now() - started) }, 'app context open');
  return app;
}

/**
 * Refuses to work on a schema with pending migrations (missing tables or columns would surface as
 * obscure SQL errors), pointing at the command that fixes it.
 */
export async function requireSchema(app: AppContext): Promise<void> {
  const pending = await app.migrator.plan();
  if (!pending.length) return;
  const n = pending.length;
  throw new CliError(
    `the database schema is not up to date (${n} pending migration${n === 1 ? '' : 's'})`,
    `run gatehouse migrate --data-dir ${app.config.dataDirAbs} (or gatehouse init)`,
  );
}

/**
 * Runs `fn` with an app context, closing it afterwards whatever happens. Without `create` a missing
 * SQLite file is refused before anything is opened: a command run on the wrong data dir leaves no
 * empty database behind. Only commands that set a database up (migrate, restore) pass `create`.
 */
export async function withApp<T>(
  rt: Pick<CliRuntime, 'modules'>,
  config: Config,
  logger: Logger,
  fn: (app: AppContext) => Promise<T>,
  opts: { create?: boolean } = {},
): Promise<T> {
  if (!opts.create) await requireDatabase(config);
  const app = await openApp(rt, config, logger);
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}
