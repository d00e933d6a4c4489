import path from 'node:path';
import type { Config } from '../../config/schema.js';
import { packageVersion } from '../../version.js';
import { createCheckContext, runChecks } from '../checks/check.js';
import { doctorChecks } from '../checks/index.js';
import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, openApp, withApp, type CliRuntime } from '../context.js';
import { CliError } from '../errors.js';
import { openRelease, runTo } from '../release-file.js';
import type { Ui } from '../ui.js';

/** Doctor's checks on the running version; any failure stops the upgrade before anything changes. */
async function preflight(rt: Pick<CliRuntime, 'modules'>, config: Config, ui: Ui): Promise<void> {
  const logger = cliLogger(config, ui);
  const ctx = createCheckContext({ config, logger, readOnly: true, modules: rt.modules, openApp: (c) => openApp(rt, c, logger) });
  try {
    const results = await runChecks(doctorChecks(), ctx);
    const failed = results.filter((r) => r.status === 'fail');
    if (failed.length) {
      throw new CliError(
        `preflight failed: ${failed.map((f) => `${f.title}: ${f.message}`).join('; ')}`,
        'fix what gatehouse doctor reports, then run the upgrade again',
      );
    }
  } finally {
    await ctx.close();
  }
}

export const registerUpgrade: CommandRegistrar = (program, rt) => {
  program
    .command('upgrade')
    .description('Move this instance to a new release: preflight (doctor), backup, migrations by the new version; on failure the old schema and version stay')
    .requiredOption('--release <path>', 'the new release: its tarball, unpacked directory, or single executable')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { release: string }, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(rt, cmd);
      const from = packageVersion();
      const release = await openRelease(opts.release);
      const retry = `gatehouse upgrade --release ${path.resolve(opts.release)} --data-dir ${config.dataDirAbs}`;
      try {
        ui.note(`Upgrading Gatehouse ${from} → ${release.version} (${config.dataDirAbs})`);
        if (release.checksumVerified) ui.step('ok', 'Release checksum', 'matches its .sha256');
        await ui.task('Preflight (doctor)', () => preflight(rt, config, ui));

        const { createBackup, defaultBackupFile } = await import('../../backup/backup.js');
        const out = defaultBackupFile(config.dataDirAbs, from, 'pre-upgrade');
        const backup = await withApp(rt, config, cliLogger(config, ui), (app) =>
          ui.task(
            'Backup',
            (progress) => createBackup(app, out, from, progress),
            (r) => r.file,
          ),
        );

        // The new version migrates, all or nothing; this (old) version keeps serving meanwhile.
        const args = ['migrate', '--atomic', '--data-dir', config.dataDirAbs];
        if (config.envFile) args.push('--environment-file', config.envFile);
        ui.note(`  … migrations by ${release.version}`);
        const migrated = await runTo([...release.command, ...args], ui);
        if (migrated.code !== 0) {
          const reason = migrated.stderr.split('\n').find((l) => l.startsWith('error: ')) ?? `exit ${migrated.code}`;
          const state = await withApp(rt, config, cliLogger(config, ui), async (app) => {
            const now = await app.migrator.executed();
            if (now.length === backup.manifest.migrations.length && now.every((m, i) => m === backup.manifest.migrations[i])) return 'unchanged';
            // Not everything ran in the one transaction (a dialect without transactional DDL): put the backup back.
            const { openBackup, restoreBackup } = await import('../../backup/restore.js');
            const opened = await openBackup(backup.file);
            try {
              await restoreBackup(app, opened, { keepConfig: true });
            } finally {
              opened.close();
            }
            return 'restored';
          });
          ui.step('fail', `Migrations by ${release.version}`, reason.replace(/^error: /, ''));
          throw new CliError(
            `upgrade to ${release.version} failed while migrating (${reason.replace(/^error: /, '')}); the database is ${state === 'unchanged' ? 'unchanged' : 'restored from the backup'} and ${from} keeps running`,
            `backup: ${backup.file}. Fix the cause, then retry: ${retry}`,
          );
        }
        ui.step('ok', `Migrations by ${release.version}`);
        ui.print(`Database ready for Gatehouse ${release.version} (backup of ${from}: ${backup.file}).`);
        ui.print(`Now run ${release.version} in place of ${from}: from the unpacked release, sudo bash install.sh with the options of the first install`);
        ui.print('(it copies, builds and restarts the service), or point the service at the new executable and restart it.');
        ui.result({ success: true, from, to: release.version, backup: backup.file, checksum_verified: release.checksumVerified });
      } finally {
        release.cleanup();
      }
    });
};
