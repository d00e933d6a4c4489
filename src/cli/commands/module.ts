import { Command } from 'commander';
import type { AppContext } from '../../app-context.js';
import type { ModulePlan, ModuleStatus, ProgressEvent } from '../../modules/hub/hub.js';
import type { CliRuntime, CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, withApp } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { count, type Ui } from '../ui.js';

type Run = (ui: Ui, app: AppContext) => Promise<void>;

/** Modules build on the core tables; their own pending migrations are the hub's business (update). */
async function requireCoreSchema(app: AppContext): Promise<void> {
  const n = (await app.migrator.plan(['core'])).length;
  if (n) {
    throw new CliError(
      `the database schema is not up to date (${n} pending core migration${n === 1 ? '' : 's'})`,
      `run gatehouse migrate --data-dir ${app.config.dataDirAbs} (or gatehouse init)`,
    );
  }
}

/**
 * Opens the app for a module command (on an up-to-date schema unless `anySchema`); the hub publishes
 * `modules:changed` so running servers follow.
 */
function action(rt: CliRuntime, run: Run, opts: { anySchema?: boolean } = {}) {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const ui = commandUi(rt, cmd);
    const config = loadCliConfig(rt, cmd);
    await withApp(rt, config, cliLogger(config, ui), async (app) => {
      if (!opts.anySchema) await requireCoreSchema(app);
      await run(ui, app);
    });
  };
}

/** `key=value` pairs for a module's settings; values are JSON when they parse, strings otherwise. */
function parseSettings(pairs: string[] = []): Record<string, unknown> | undefined {
  if (!pairs.length) return undefined;
  const out: Record<string, unknown> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i < 1) throw new UsageError(`--set expects key=value, got "${p}"`);
    const raw = p.slice(i + 1);
    try {
      out[p.slice(0, i)] = JSON.parse(raw);
    } catch {
      out[p.slice(0, i)] = raw;
    }
  }
  return out;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

function describe(e: ProgressEvent): string {
  switch (e.step) {
    case 'plan':
      return `planned ${e.modules.join(', ')}`;
    case 'migration':
      return `${e.direction === 'up' ? 'applying' : 'reverting'} ${e.id} (${e.index + 1}/${e.total})`;
    case 'commit':
      return 'committing';
    case 'settle':
      return `waiting ${e.ms} ms for other instances to let go of the data`;
    case 'reload':
      return 'reloading modules';
  }
}

/** The plan of an install or update; the SQL of each migration only for a dry run or with --verbose. */
function printPlan(ui: Ui, p: ModulePlan, dryRun = false): void {
  ui.print(`${p.action === 'install' ? 'Install' : 'Update'} ${p.module_id} ${p.installed_version ? `${p.installed_version} → ` : ''}${p.module_version}`);
  if (p.up_to_date) ui.print('  already up to date');
  if (p.dependencies.length)
    ui.print(
      `  requires: ${p.dependencies.map((d) => `${d.module_id}${d.installed ? ' (installed)' : d.included ? ' (included)' : ' (missing)'}`).join(', ')}`,
    );
  const reused = p.reused_migrations.length ? ` (reusing ${p.reused_migrations.length} already applied)` : '';
  ui.print(p.migrations.length ? `  migrations (${p.migrations.length})${reused}:` : `  migrations: none pending${reused}`);
  for (const m of p.migrations) {
    ui.print(`    ${m.name}`);
    if (dryRun || ui.verbose) for (const sql of m.sql) ui.print(`      ${sql.replace(/\s+/g, ' ')}`);
  }
  if (p.tables.length) ui.print(`  tables: ${p.tables.join(', ')}`);
  if (p.user_fields.length) ui.print(`  user fields: ${p.user_fields.map((f) => `${f.name} (${f.type}${f.write_only ? ', write-only' : ''})`).join(', ')}`);
  if (p.routes.length) ui.print(`  routes: ${p.routes.map((r) => `${r.method} ${r.path}`).join(', ')}`);
  if (p.settings.length) ui.print(`  settings: ${p.settings.map((s) => `${s.key}=${JSON.stringify(s.value)}`).join(', ')}`);
  if (p.jobs.length) ui.print(`  jobs: ${p.jobs.map((j) => `${j.name} (${j.schedule})`).join(', ')}`);
  if (p.hooks.length) ui.print(`  hooks: ${p.hooks.join(', ')}`);
  for (const pr of p.problems) ui.print(`  ✖ ${pr.message}`);
  if (p.dry_run.error) ui.print(`  ✖ dry-run failed (rolled back): ${p.dry_run.error}`);
  else if (p.dry_run.executed) ui.print('  ✔ dry-run: the migrations ran in a transaction that was rolled back');
}

function printStatus(ui: Ui, s: ModuleStatus, detailed: boolean): void {
  const version = s.installed_version
    ? `${s.installed_version}${s.update_available ? ` (update to ${s.module_version} available)` : ''}`
    : `- (registry ${s.module_version})`;
  ui.print(`${s.module_id.padEnd(16)} ${s.status.padEnd(14)} ${version}`);
  if (!detailed) return;
  ui.print(`  ${s.module_description}`);
  // The type is its own column: a migration or table is named once ("✔ migration   20261124-…"), not "migration migration …".
  const name = (c: ModuleStatus['components'][number]) => (c.items ? c.items.join(', ') : c.component_id.slice(c.component_id.indexOf(':') + 1));
  for (const c of s.components) ui.print(`  ${c.installed ? '✔' : '·'} ${c.component_type.padEnd(11)} ${name(c)} [${c.status}]`);
  for (const p of s.problems) ui.print(`  ✖ ${p.message}`);
}

async function confirmChange(ui: Ui, message: string, destructive: boolean): Promise<void> {
  if (ui.yes) return;
  if (ui.interactive) {
    if (!(await ui.confirm({ flag: '--yes', message, default: !destructive }))) throw new CliError('cancelled');
  } else if (destructive) {
    throw new UsageError('this deletes data and needs confirmation', 'pass --yes');
  }
}

export const registerModuleCommands: CommandRegistrar = (program, rt) => {
  const mod = program.command('module').description('Module hub: module list | status | install | update | enable | disable | uninstall | unlock | exec');

  mod
    .command('list')
    .description('List the modules of the registry with versions and descriptions')
    .option('--json', 'print the result as JSON')
    .action(
      action(
        rt,
        async (ui, app) => {
          const list = app.modules.hub.list();
          for (const m of list)
            ui.print(
              `${m.module_id.padEnd(16)} ${m.module_version.padEnd(8)} ${(m.installed ? (m.enabled ? 'installed' : 'disabled') : 'available').padEnd(10)} ${m.module_description}`,
            );
          ui.result({ success: true, modules: list });
        },
        { anySchema: true },
      ),
    );

  mod
    .command('status [id]')
    .description('Installed or not, version, components, switched on or off')
    .option('--json', 'print the result as JSON')
    .action(async (id: string | undefined, _opts: unknown, cmd: Command) => {
      await action(rt, async (ui, app) => {
        const statuses = await app.modules.hub.status(id ? [id] : undefined);
        for (const s of statuses) printStatus(ui, s, Boolean(id));
        ui.result({ success: true, modules: statuses });
      })(cmd);
    });

  mod
    .command('install <id...>')
    .description('Plan (dry-run) and install modules: migrations and state in one transaction')
    .option('--dry-run', 'print the plan; the migrations run in a transaction that is rolled back, nothing changes')
    .option('--set <key=value>', 'a module setting (repeatable; one module only)', collect)
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--no-prompt', 'never ask: a change that needs confirmation without --yes is an error (exit 2)')
    .option('--if-missing', 'install only those not installed yet; none missing is success (scripts, quickstart)')
    .option('--json', 'print the result as JSON')
    .action(async (requested: string[], opts: { dryRun?: boolean; set?: string[]; ifMissing?: boolean }, cmd: Command) => {
      const settings = parseSettings(opts.set);
      if (settings && requested.length > 1) throw new UsageError('--set applies to one module at a time');
      const config = settings ? { [requested[0]]: settings } : undefined;
      await action(rt, async (ui, app) => {
        let ids = requested;
        let already: string[] = [];
        if (opts.ifMissing) {
          const present = new Set((await app.modules.hub.status()).filter((m) => m.installed_version !== null).map((m) => m.module_id));
          ids = requested.filter((id) => !present.has(id));
          already = requested.filter((id) => present.has(id));
          if (ids.length === 0) {
            ui.print(`Already installed: ${requested.join(', ')}; nothing to do.`);
            ui.result({ success: true, dry_run: Boolean(opts.dryRun), modules: await app.modules.hub.status(requested) });
            return;
          }
        }
        // Quiet unless there is a plan to read: a dry run, a question to answer, or --verbose. An
        // install with --yes (the quickstart, scripts) says one line per module and nothing else, so
        // what was printed before it (init's once-shown password) stays on the screen.
        const detailed = Boolean(opts.dryRun) || ui.verbose || (ui.interactive && !ui.yes);
        const planning = () => app.modules.hub.planInstall(ids, { config });
        const plans = detailed
          ? await ui.task('Planning (dry-run)', planning, (p) =>
              count(
                p.reduce((n, x) => n + x.migrations.length, 0),
                'migration',
              ),
            )
          : await planning();
        if (detailed) for (const p of plans) printPlan(ui, p, Boolean(opts.dryRun));
        const ok = plans.every((p) => p.ok);
        if (opts.dryRun) {
          ui.print(ok ? 'Dry run: nothing was changed.' : 'Dry run: the install would be refused; nothing was changed.');
          ui.result({ success: ok, dry_run: true, plans });
          if (!ok) rt.exitCode = 1;
          return;
        }
        if (!ok)
          throw new CliError(
            `cannot install ${ids.join(', ')}: ${plans.flatMap((p) => p.problems.map((x) => x.message).concat(p.dry_run.error ?? [])).join('; ')}`,
          );
        await confirmChange(ui, `Install ${plans.map((p) => p.module_id).join(', ')}?`, false);
        const installing = (progress?: (detail: string) => void) =>
          app.modules.hub.install(ids, { config, actor: 'cli', onProgress: progress && ((e) => progress(describe(e))) });
        const result = detailed
          ? await ui.task(`Installing ${ids.join(', ')}`, installing, (r) => `${count(r.migrations.length, 'migration')} applied`)
          : await installing();
        for (const id of already) ui.print(`${id} already installed`);
        for (const id of result.modules) {
          const plan = plans.find((p) => p.module_id === id);
          const applied = result.migrations.filter((m) => m.startsWith(`${id}/`)).length;
          ui.print(`Installed ${id}${plan ? ` ${plan.module_version}` : ''} (${count(applied, 'migration')} applied)`);
        }
        if (detailed) ui.print('Running servers pick the change up within seconds.');
        ui.result({ success: true, dry_run: false, result, modules: await app.modules.hub.status(result.modules) });
      })(cmd);
    });

  mod
    .command('update <id>')
    .description("Apply a newer registry version's migrations")
    .option('--dry-run', 'print the plan; nothing changes')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--no-prompt', 'never ask: a change that needs confirmation without --yes is an error (exit 2)')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, opts: { dryRun?: boolean }, cmd: Command) => {
      await action(rt, async (ui, app) => {
        const plan = await app.modules.hub.planUpdate(id);
        printPlan(ui, plan, Boolean(opts.dryRun));
        if (opts.dryRun || plan.up_to_date || !plan.ok) {
          ui.result({ success: plan.ok, dry_run: true, plan });
          if (!plan.ok) rt.exitCode = 1;
          return;
        }
        await confirmChange(ui, `Update ${id} to ${plan.module_version}?`, false);
        const result = await ui.task(`Updating ${id}`, (progress) => app.modules.hub.update(id, { actor: 'cli', onProgress: (e) => progress(describe(e)) }));
        ui.print(`Updated ${id} to ${plan.module_version}.`);
        ui.result({ success: true, dry_run: false, result });
      })(cmd);
    });

  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    mod
      .command(`${name} <id>`)
      .description(enabled ? 'Switch an installed module on' : 'Switch a module off (its routes answer 503; data stays)')
      .option('--json', 'print the result as JSON')
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        await action(rt, async (ui, app) => {
          const result = enabled ? await app.modules.hub.enable(id, { actor: 'cli' }) : await app.modules.hub.disable(id, { actor: 'cli' });
          ui.print(result.changed ? `${id} switched ${enabled ? 'on' : 'off'}` : `${id} was already ${enabled ? 'on' : 'off'}`);
          ui.result({ success: true, result });
        })(cmd);
      });
  }

  mod
    .command('uninstall <id>')
    .description('Uninstall a module; its data stays unless --drop-data (a reinstall reuses it)')
    .option('--drop-data', "also revert the module's migrations: its tables and columns are deleted")
    .option('--force', 'uninstall even where the module refuses (it says what it undid, e.g. two-factor turned off)')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--no-prompt', 'never ask: a change that needs confirmation without --yes is an error (exit 2)')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, opts: { dropData?: boolean; force?: boolean }, cmd: Command) => {
      await action(rt, async (ui, app) => {
        await confirmChange(
          ui,
          opts.dropData ? `Uninstall ${id} and DELETE its data?` : `Uninstall ${id} (its data stays)?`,
          Boolean(opts.dropData || opts.force),
        );
        const result = await ui.task(`Uninstalling ${id}`, (progress) =>
          app.modules.hub.uninstall(id, { dropData: opts.dropData, force: opts.force, actor: 'cli', onProgress: (e) => progress(describe(e)) }),
        );
        for (const n of result.notices ?? []) ui.print(n);
        ui.print(opts.dropData ? `Uninstalled ${id}; its data was deleted.` : `Uninstalled ${id}; its data was kept (reinstalling reuses it).`);
        ui.result({ success: true, result });
      })(cmd);
    });

  mod
    .command('unlock')
    .description('Remove the hub lock a crashed install left behind (it also expires after 10 minutes)')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--json', 'print the result as JSON')
    .action(async (_opts: unknown, cmd: Command) => {
      await action(rt, async (ui, app) => {
        const { LOCK_KEY } = await import('../../modules/hub/install-lock.js');
        const row = await app.repos.settings.get(LOCK_KEY);
        if (!row) {
          ui.print('No hub lock is held.');
          ui.result({ success: true, removed: false });
          return;
        }
        await confirmChange(ui, `Remove the lock held since ${String(row.updated_at)}? Only if no install is running.`, true);
        await app.repos.settings.remove(LOCK_KEY);
        ui.print('Hub lock removed.');
        ui.result({ success: true, removed: true });
      })(cmd);
    });

  mod
    .command('exec <command> [args...]')
    .description('Run a command an installed module provides (<module>:<command> [args])')
    .allowUnknownOption()
    .option('--json', 'print the result as JSON')
    .action(async (name: string, args: string[], _opts: unknown, cmd: Command) => {
      await action(rt, async (ui, app) => {
        const def = app.modules
          .registry()
          .flatMap((m) => m.commands.map((c) => ({ m, c })))
          .find((x) => x.c.name === name);
        if (!def)
          throw new UsageError(
            `no module command ${name}`,
            `available: ${
              app.modules
                .registry()
                .flatMap((m) => m.commands.map((c) => c.name))
                .join(', ') || 'none'
            }`,
          );
        if (!app.modules.isEnabled(def.m.id)) throw new CliError(`module ${def.m.id} is not installed and switched on`);
        const sub = new Command(name)
          .exitOverride()
          .configureOutput({ writeOut: (s) => rt.streams.stdout.write(s), writeErr: (s) => rt.streams.stderr.write(s) });
        if (def.c.arguments) sub.arguments(def.c.arguments);
        for (const o of def.c.options ?? []) sub.option(o.flags, o.description);
        sub.option('--json', 'print the result as JSON');
        await sub.parseAsync(args, { from: 'user' });
        const value = await def.c.run({ ctx: app.modules.context(def.m.id), args: sub.args, options: sub.opts(), print: (line) => ui.print(line) });
        ui.result({ success: true, result: value ?? null });
      })(cmd);
    });
};
