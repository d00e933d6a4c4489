import path from 'node:path';
import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, requireSchema, withApp } from '../context.js';
import { CliError } from '../errors.js';
import { packageVersion } from '../../version.js';

/** Backup failures the operator can act on, as one line and a hint. */
async function explained<T>(fn: () => Promise<T>): Promise<T> {
  const { ToolMissingError } = await import('../../backup/tools.js');
  const { BackupInvalidError } = await import('../../backup/restore.js');
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ToolMissingError) {
      throw new CliError(err.message, err.pkg ? `install it: apt-get install -y ${err.pkg}` : undefined);
    }
    if (err instanceof BackupInvalidError) throw new CliError(err.message, 'check the file name, or take the backup again');
    throw err;
  }
}

export const registerBackup: CommandRegistrar = (program, rt) => {
  program
    .command('backup')
    .description('Write a backup archive: database (SQLite online backup or pg_dump), config.json, env file, pictures; checksummed')
    .option('--out <file>', 'where to write it (default: DATA_DIR/backups/gatehouse-backup-<version>-<time>.tar.gz)')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { out?: string }, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(rt, cmd);
      const { createBackup, defaultBackupFile } = await import('../../backup/backup.js');
      const out = opts.out ? path.resolve(opts.out) : defaultBackupFile(config.dataDirAbs, packageVersion());
      const result = await withApp(rt, config, cliLogger(config, ui), (app) =>
        explained(() =>
          ui.task(
            `Backing up to ${out}`,
            (progress) => createBackup(app, out, packageVersion(), progress),
            (r) => `${Math.round(r.bytes / 1024)} KiB`,
          ),
        ),
      );
      ui.print(`Backup written: ${result.file}`);
      ui.print(`  sha256 ${result.sha256}`);
      ui.print(`  restore with: gatehouse restore ${result.file} --data-dir ${config.dataDirAbs}`);
      ui.result({ success: true, file: result.file, sha256: result.sha256, bytes: result.bytes, manifest: result.manifest });
    });

  program
    .command('restore <file>')
    .description('Restore a backup archive into this instance (database, pictures, config.json); asks first')
    .option('--keep-config', "keep this data dir's config.json instead of the backup's")
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, opts: { keepConfig?: boolean }, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(rt, cmd);
      const { openBackup, restoreBackup } = await import('../../backup/restore.js');
      const backup = await explained(() => openBackup(path.resolve(file)));
      try {
        const m = backup.manifest;
        ui.note(`Backup of Gatehouse ${m.gatehouse_version} taken ${m.created_at} (${m.dialect}, ${m.migrations.length} migrations), checksums verified.`);
        const sure = await ui.confirm({
          flag: '--yes',
          message: `Replace the database and pictures of ${config.dataDirAbs} with this backup?`,
          yesDefault: () => true,
        });
        if (!sure) throw new CliError('restore cancelled; nothing changed');
        // A restore may be what sets up a fresh data dir (a new host), so it may create the database.
        const done = await withApp(
          rt,
          config,
          cliLogger(config, ui),
          (app) =>
            explained(() =>
              ui.task(
                'Restoring',
                () => restoreBackup(app, backup, { keepConfig: opts.keepConfig }),
                (r) => `${r.length} parts`,
              ),
            ),
          { create: true },
        );
        // A schema older than this version's is brought up to date by `migrate`; say so rather than leave serve to refuse.
        const pending = await withApp(rt, loadCliConfig(rt, cmd), cliLogger(config, ui), (app) =>
          requireSchema(app).then(
            () => null,
            (err: Error) => err.message,
          ),
        );
        ui.print('Restored:');
        for (const d of done) ui.print(`  ${d}`);
        if (pending) ui.print(`Then: ${pending} — run gatehouse migrate --data-dir ${config.dataDirAbs}`);
        ui.print('Restart the service so no process keeps cached sessions from before the restore.');
        ui.result({ success: true, restored: done, pending_migrations: Boolean(pending) });
      } finally {
        backup.close();
      }
    });
};
