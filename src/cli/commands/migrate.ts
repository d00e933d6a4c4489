import type { AppContext } from '../../app-context.js';
import { clearMigrationLock, describeLock, readMigrationLock } from '../../data/migration-lock.js';
import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, withApp } from '../context.js';
import { missingDatabase } from '../database-file.js';
import { UsageError } from '../errors.js';
import { applyMigrations } from '../migrations.js';
import { count, type Ui } from '../ui.js';

interface MigrateOptions {
  dryRun?: boolean;
  status?: boolean;
  unlock?: boolean;
  atomic?: boolean;
  yes?: boolean;
}

export const registerMigrate: CommandRegistrar = (program, rt) => {
  program
    .command('migrate')
    .description('Apply pending database migrations (core and installed modules)')
    .option('--dry-run', 'print the plan and its SQL; change nothing')
    .option('--status', 'list applied and pending migrations and who holds the migration lock; change nothing')
    .option('--atomic', 'apply all pending migrations in one transaction: on failure none is applied (gatehouse upgrade uses it)')
    .option('--unlock', 'remove a migration lock left by a process that died')
    .option('-y, --yes', 'with --unlock: do not ask for confirmation')
    .option('--json', 'print the result as JSON')
    .action(async (opts: MigrateOptions, cmd) => {
      const ui = commandUi(rt, cmd);
      if ([opts.dryRun, opts.status, opts.unlock].filter(Boolean).length > 1) throw new UsageError('use one of --dry-run, --status, --unlock');
      let config = loadCliConfig(rt, cmd);
      // A dry run on a data dir without a database plans against an empty one in memory: it creates no file.
      if (opts.dryRun && (await missingDatabase(config))) config = { ...config, databaseUrl: 'sqlite::memory:' };
      await withApp(
        rt,
        config,
        cliLogger(config, ui),
        async (app) => {
          if (opts.status) return status(app, ui);
          if (opts.unlock) return unlock(app, ui);
          const done = (await app.migrator.executed()).length;
          if (opts.dryRun) {
            // Runs the migrations in a transaction that is rolled back, to show the SQL they would run.
            const plan = await app.migrator.dryRun();
            if (!plan.length) ui.print(`Nothing to do: the schema is up to date (${count(done, 'migration')} applied).`);
            else {
              ui.print(`${count(plan.length, 'pending migration')} (dry run, nothing changed):`);
              for (const m of plan) {
                ui.print(`  ${m.id}`);
                for (const sql of m.sql) ui.print(`      ${sql.replace(/\s+/g, ' ')}`);
              }
            }
            ui.result({ success: true, dry_run: true, applied_before: done, pending: plan });
            return;
          }
          const applied = await applyMigrations(app, ui, { atomic: opts.atomic });
          if (!applied.length) ui.print(`Nothing to do: the schema is up to date (${count(done, 'migration')} applied).`);
          else {
            ui.print(`Applied ${count(applied.length, 'migration')}:`);
            for (const m of applied) ui.print(`  ${m.id}`);
          }
          ui.result({ success: true, dry_run: false, applied_before: done, applied });
          // Applying migrations may set up a new database; --status and --unlock only look.
        },
        { create: !opts.status && !opts.unlock },
      );
    });
};

async function status(app: AppContext, ui: Ui): Promise<void> {
  const [applied, pending, lock] = await Promise.all([app.migrator.executed(), app.migrator.plan(), readMigrationLock(app)]);
  ui.print(`${count(applied.length, 'migration')} applied, ${pending.length} pending.`);
  for (const id of applied) ui.print(`  applied  ${id}`);
  for (const m of pending) ui.print(`  pending  ${m.id}`);
  if (lock) {
    ui.print(`Lock: ${describeLock(lock)}.`);
    ui.print(`  → clear it once nothing is migrating: gatehouse migrate --unlock --data-dir ${app.config.dataDirAbs}`);
  } else ui.print('Lock: free.');
  ui.result({
    success: true,
    applied,
    pending: pending.map((m) => m.id),
    lock: lock ? { ...lock.holder, alive: lock.alive } : null,
  });
}

async function unlock(app: AppContext, ui: Ui): Promise<void> {
  const lock = await readMigrationLock(app);
  if (!lock) {
    ui.print('No migration lock is held.');
    ui.result({ success: true, removed: false });
    return;
  }
  if (lock.alive === true) ui.warn(`the holder, process ${lock.holder.pid}, is still running`);
  const sure = await ui.confirm({ flag: '--yes', message: `Remove the lock (${describeLock(lock)})?`, yesDefault: () => true });
  if (!sure) {
    ui.print('Kept the lock.');
    ui.result({ success: true, removed: false });
    return;
  }
  await clearMigrationLock(app);
  ui.print('Removed the migration lock.');
  ui.result({ success: true, removed: true });
}
