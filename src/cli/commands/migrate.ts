import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, withApp } from '../context.js';
import { applyMigrations } from '../migrations.js';

export const registerMigrate: CommandRegistrar = (program, rt) => {
  program
    .command('migrate')
    .description('Apply pending database migrations (core and installed modules)')
    .option('--dry-run', 'print the plan and its SQL; change nothing')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { dryRun?: boolean }, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(cmd);
      await withApp(config, cliLogger(config, ui), async (app) => {
        const done = (await app.migrator.executed()).length;
        if (opts.dryRun) {
          // Runs the migrations in a transaction that is rolled back, to show the SQL they would run.
          const plan = await app.migrator.dryRun();
          if (!plan.length) ui.print(`Nothing to do: the schema is up to date (${done} migrations applied).`);
          else {
            ui.print(`${plan.length} pending migration${plan.length === 1 ? '' : 's'} (dry run, nothing changed):`);
            for (const m of plan) {
              ui.print(`  ${m.id}`);
              for (const sql of m.sql) ui.print(`      ${sql.replace(/\s+/g, ' ')}`);
            }
          }
          ui.result({ success: true, dry_run: true, applied_before: done, pending: plan });
          return;
        }
        const applied = await applyMigrations(app, ui);
        if (!applied.length) ui.print(`Nothing to do: the schema is up to date (${done} migrations applied).`);
        else {
          ui.print(`Applied ${applied.length} migration${applied.length === 1 ? '' : 's'}:`);
          for (const m of applied) ui.print(`  ${m.id}`);
        }
        ui.result({ success: true, dry_run: false, applied_before: done, applied });
      });
    });
};
