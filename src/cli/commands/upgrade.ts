import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../../config/schema.js';
import { packageVersion } from '../../version.js';
import { createCheckContext, runChecks } from '../checks/check.js';
import { doctorChecks } from '../checks/index.js';
import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, openApp, withApp } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import type { Ui } from '../ui.js';

/** How to run the new release's CLI: a tree with bin/gatehouse (run with this Node), or a single executable. */
interface Release {
  command: string[];
  version: string;
  cleanup(): void;
}

function runTo(cmd: string[], ui: Ui | null): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd[0], cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      // The new version's progress, shown as it comes.
      if (ui) for (const line of d.toString().split('\n')) if (line.trim()) ui.note(`    ${line.trim()}`);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function openRelease(spec: string): Promise<Release> {
  const abs = path.resolve(spec);
  if (!existsSync(abs)) throw new UsageError(`--release: ${abs} does not exist`);
  let dir: string | null = null;
  let cleanup = () => {};
  if (statSync(abs).isDirectory()) dir = abs;
  else if (/\.(tar\.gz|tgz)$/.test(abs)) {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-release-'));
    cleanup = () => rmSync(tmp, { recursive: true, force: true });
    const { run } = await import('../../backup/tools.js');
    await run('tar', ['-xzf', abs, '-C', tmp], { missing: 'tar' });
    // A release tarball holds one top-level directory (gatehouse-<version>/).
    const top = readdirSync(tmp);
    dir = top.length === 1 && statSync(path.join(tmp, top[0])).isDirectory() ? path.join(tmp, top[0]) : tmp;
  }
  let command: string[];
  if (dir) {
    const bin = path.join(dir, 'bin', 'gatehouse');
    const exe = path.join(dir, 'gatehouse');
    // A release tarball carries the single executable (self-contained) next to the sources.
    if (existsSync(exe) && statSync(exe).isFile()) command = [exe];
    else if (existsSync(bin)) command = [process.execPath, bin];
    else {
      cleanup();
      throw new UsageError(`--release: ${abs} holds no Gatehouse (no bin/gatehouse or gatehouse executable)`);
    }
  } else command = [abs];
  const v = await runTo([...command, '--version'], null).catch(() => null);
  if (!v || v.code !== 0) {
    cleanup();
    throw new CliError(`--release: ${abs} does not run (${v?.stderr.trim().split('\n').pop() ?? 'cannot start it'})`);
  }
  return { command, version: v.stdout.trim(), cleanup };
}

/** Doctor's checks on the running version; any failure stops the upgrade before anything changes. */
async function preflight(config: Config, ui: Ui): Promise<void> {
  const logger = cliLogger(config, ui);
  const ctx = createCheckContext({ config, logger, readOnly: true, openApp: (c) => openApp(c, logger) });
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
      const config = loadCliConfig(cmd);
      const from = packageVersion();
      const release = await openRelease(opts.release);
      const retry = `gatehouse upgrade --release ${path.resolve(opts.release)} --data-dir ${config.dataDirAbs}`;
      try {
        ui.note(`Upgrading Gatehouse ${from} → ${release.version} (${config.dataDirAbs})`);
        await ui.task('Preflight (doctor)', () => preflight(config, ui));

        const { createBackup, defaultBackupFile } = await import('../../backup/backup.js');
        const out = defaultBackupFile(config.dataDirAbs, from, 'pre-upgrade');
        const backup = await withApp(config, cliLogger(config, ui), (app) =>
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
          const state = await withApp(config, cliLogger(config, ui), async (app) => {
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
        ui.result({ success: true, from, to: release.version, backup: backup.file });
      } finally {
        release.cleanup();
      }
    });
};
