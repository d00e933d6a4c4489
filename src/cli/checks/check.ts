import type { AppContext } from '../../app-context.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import type { ModuleManifest } from '../../modules/define-module.js';
import { requireDatabase } from '../database-file.js';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  status: CheckStatus;
  message: string;
  /** What to do about it (shown under a warn or fail). */
  hint?: string;
  /** A failure that may pass by itself (the database is unreachable right now): `serve` waits it out. */
  transient?: boolean;
}

export interface CheckContext {
  /** null when the configuration did not load (see configError). */
  config: Config | null;
  configError: Error | null;
  logger: Logger;
  /**
   * The doctor (and upgrade's preflight) only look: a check then creates nothing, not even the SQLite
   * file that opening the database would. init and serve --migrate are the commands that create.
   */
  readOnly: boolean;
  /** The configuration; only checks marked `withoutConfig` may find it missing. */
  requireConfig(): Config;
  /** The app context (database, Redis, modules), opened once and shared by the checks. */
  app(): Promise<AppContext>;
  /** The modules that can be installed (the registry the composition root handed the CLI). */
  modules: readonly ModuleManifest[];
}

/** A doctor check as data. Modules may contribute more of these. */
export interface Check {
  id: string;
  title: string;
  category: string;
  /** Also run before `init` / `serve`; a failure stops them. */
  preflight?: ('init' | 'serve')[];
  /** Ids of checks this one builds on: skipped when one of them failed. */
  needs?: string[];
  /** Runs when the configuration did not load (otherwise it is skipped then). */
  withoutConfig?: boolean;
  run(ctx: CheckContext): Promise<CheckResult>;
}

export interface CheckOutcome extends CheckResult {
  id: string;
  title: string;
  category: string;
}

export const ok = (message: string): CheckResult => ({ status: 'ok', message });
export const warn = (message: string, hint?: string): CheckResult => ({ status: 'warn', message, hint });
export const fail = (message: string, hint?: string): CheckResult => ({ status: 'fail', message, hint });
export const skip = (message: string): CheckResult => ({ status: 'skip', message });

export interface CheckContextOptions {
  config: Config | null;
  configError?: Error | null;
  logger: Logger;
  /** See CheckContext.readOnly (default false: init and serve may create the database). */
  readOnly?: boolean;
  /** Opens the app context (lazily, once). */
  openApp: (config: Config) => Promise<AppContext>;
  /** The module registry (CheckContext.modules; none when left out). */
  modules?: readonly ModuleManifest[];
}

/** A context whose app is opened on first use; close() closes it if it was. */
export function createCheckContext(opts: CheckContextOptions): CheckContext & { close(): Promise<void>; opened(): AppContext | null } {
  let pending: Promise<AppContext> | null = null;
  let opened: AppContext | null = null;
  const requireConfig = () => {
    if (!opts.config) throw new Error('the configuration is invalid');
    return opts.config;
  };
  return {
    config: opts.config,
    configError: opts.configError ?? null,
    logger: opts.logger,
    requireConfig,
    readOnly: Boolean(opts.readOnly),
    modules: opts.modules ?? [],
    app() {
      pending ??= (async () => {
        const config = requireConfig();
        // Checks that open the app need the database check, which fails first; this is the backstop.
        if (opts.readOnly) await requireDatabase(config);
        return (opened = await opts.openApp(config));
      })();
      return pending;
    },
    opened: () => opened,
    async close() {
      if (opened) await opened.close();
    },
  };
}

/** Runs checks in order; a check that throws is a failure with the error's message. */
export async function runChecks(checks: Check[], ctx: CheckContext, onResult?: (o: CheckOutcome) => void): Promise<CheckOutcome[]> {
  const out: CheckOutcome[] = [];
  for (const check of checks) {
    let r: CheckResult;
    const failedNeed = out.find((o) => o.status === 'fail' && check.needs?.includes(o.id));
    if (!ctx.config && !check.withoutConfig) r = skip('not checked: the configuration is invalid');
    else if (failedNeed) r = skip(`not checked: ${failedNeed.title.toLowerCase()} failed`);
    else {
      try {
        r = await check.run(ctx);
      } catch (err) {
        r = fail(oneLine((err as Error).message ?? String(err)));
      }
    }
    const o: CheckOutcome = { id: check.id, title: check.title, category: check.category, ...r };
    out.push(o);
    onResult?.(o);
  }
  return out;
}

export const oneLine = (s: string) => s.replace(/\s*\n\s*/g, '; ').trim();

/** A URL as it may be shown: without password. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}
